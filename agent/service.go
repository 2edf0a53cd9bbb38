package agent

import (
	"context"
	"errors"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
)

// Service opens conversations over one store. Every edge that runs turns
// (chat, run, the server) goes through it, so which session a request
// names, its lock, the repair of interrupted tool calls and the replay
// log's session events happen here and nowhere else.
type Service struct {
	Store loom.Store
	// Build makes the agent of a session and records on s the model,
	// provider and profile it chose; Setup.Build is the usual one.
	Build func(ctx context.Context, st loom.Store, s *loom.Session, c Choice) (*Loop, error)
	// Now returns the current time, for new command-line keys.
	Now func() time.Time
}

// Spec says which session a conversation is in and what agent it wants.
// The first of Session, Key, New and Continue that is set decides; with
// none, the project's current command-line session is resumed, or a new
// one is started when it has none.
type Spec struct {
	UserID string
	// Project and Cwd are where a new command-line session belongs.
	Project loom.Project
	Cwd     string

	// Session is one the caller found already (a reference resolved).
	Session *loom.Session
	// Key names a session by its key, see Service.ForKey.
	Key string
	// New starts a new command-line session in Project.
	New bool
	// Continue resumes the project's current session; ENOTFOUND when
	// there is none.
	Continue bool

	// Agent is the model and profile asked for.
	Agent Choice
}

// UnavailableError is an Open that failed because no agent could be
// built (no provider configured, a bad profile): the session is fine.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// IsUnavailable reports whether err says no agent could be built.
func IsUnavailable(err error) bool {
	var ue *UnavailableError
	return errors.As(err, &ue)
}

func (svc *Service) now() time.Time {
	if svc.Now == nil {
		return loom.Now()
	}
	return svc.Now()
}

// Choose finds the session spec names, or prepares a new one that the
// first message will create. exists says which.
func (svc *Service) Choose(ctx context.Context, spec Spec) (s *loom.Session, exists bool, err error) {
	switch {
	case spec.Session != nil:
		return spec.Session, spec.Session.MessageCount > 0, nil
	case spec.Key != "":
		return svc.ForKey(ctx, spec.UserID, spec.Key, spec.Project, spec.Cwd)
	case spec.New:
		return svc.fresh(spec, loom.CLIKeyAt(spec.Project.Name, svc.now())), false, nil
	}
	cur, err := svc.Current(ctx, spec.UserID, spec.Project)
	if err != nil {
		return nil, false, err
	}
	if cur != nil {
		return cur, true, nil
	}
	if spec.Continue {
		return nil, false, loom.Errorf(loom.ENOTFOUND, "no session to continue in project %s (%s)", spec.Project.Name, spec.Project.Root)
	}
	// The project's first session takes the plain key when it is free.
	key := loom.CLIKey(spec.Project.Name)
	taken, err := svc.Store.Sessions(ctx, loom.SessionFilter{UserID: spec.UserID, ProjectID: spec.Project.ID, Key: key, Limit: 1, Archived: loom.WithArchived})
	if err != nil {
		return nil, false, err
	}
	if len(taken) > 0 {
		key = loom.CLIKeyAt(spec.Project.Name, svc.now())
	}
	return svc.fresh(spec, key), false, nil
}

func (svc *Service) fresh(spec Spec, key string) *loom.Session {
	return &loom.Session{ID: loom.NewID(), UserID: spec.UserID, Key: key, Surface: loom.SurfaceOf(key),
		Kind: loom.KindMain, Project: spec.Project, Cwd: spec.Cwd, GitBranch: paths.GitBranch(spec.Cwd)}
}

// ForKey finds the user's session that key names, or prepares a new one.
// A command-line key (cli:…) names a session of project. Any other key
// (telegram:12345) names the user's one session with that key wherever
// it was made; a new one belongs to project and cwd when the caller has
// them (the command line's, so it is listed with the project's
// sessions), to no project otherwise (the server's). A sub-agent's
// session is never named by a key.
func (svc *Service) ForKey(ctx context.Context, user, key string, project loom.Project, cwd string) (*loom.Session, bool, error) {
	if err := loom.ValidKey(key); err != nil {
		return nil, false, err
	}
	cli := loom.IsCLIKey(key)
	filter := loom.SessionFilter{UserID: user, Key: key, Limit: 50, Archived: loom.WithArchived}
	if cli {
		filter.ProjectID = project.ID
	}
	found, err := svc.Store.Sessions(ctx, filter)
	if err != nil {
		return nil, false, err
	}
	for _, x := range found {
		if x.Kind != loom.KindSubagent && x.Source == nil && (!cli || x.Project.ID == project.ID) {
			return x, true, nil
		}
	}
	// A key of a session imported from another agent names it until a
	// conversation continues it (in a fork that takes the key).
	for _, x := range found {
		if x.Source != nil && x.Kind != loom.KindSubagent && !cli {
			return x, true, nil
		}
	}
	return svc.fresh(Spec{UserID: user, Project: project, Cwd: cwd}, key), false, nil
}

// Current is the project's most recently active command-line session
// that a user works in directly (not a sub-agent's), nil when none.
func (svc *Service) Current(ctx context.Context, user string, project loom.Project) (*loom.Session, error) {
	var cur *loom.Cursor
	for {
		page, err := svc.Store.Sessions(ctx, loom.SessionFilter{UserID: user, ProjectID: project.ID, Surface: loom.SurfaceCLI, Limit: 20, Before: cur})
		if err != nil {
			return nil, err
		}
		for _, s := range page {
			if s.Kind != loom.KindSubagent {
				return s, nil
			}
		}
		if len(page) < 20 {
			return nil, nil
		}
		last := page[len(page)-1]
		cur = &loom.Cursor{UpdatedAt: last.UpdatedAt, ID: last.ID}
	}
}

// Open chooses the session spec names, builds its agent, takes its lock
// and, when the session exists, stores a changed model or profile on it,
// repairs tool calls a dead process left unfinished and logs the resume.
// A session imported from another agent is continued in a fork of it
// that the first message makes (see continueImported). Close releases
// the lock.
func (svc *Service) Open(ctx context.Context, spec Spec) (*Conversation, error) {
	s, exists, err := svc.Choose(ctx, spec)
	if err != nil {
		return nil, err
	}
	c := &Conversation{svc: svc, spec: spec}
	var forkOf *loom.Session
	if exists && s.Source != nil {
		c.imported, forkOf = s, s
		s = svc.continueImported(s, spec)
	}
	if err := c.attach(ctx, s, exists, forkOf, spec.Agent); err != nil {
		return nil, err
	}
	return c, nil
}

// continueImported is the fork that a conversation continues a session
// imported from another agent in, so that the import stays a faithful
// mirror of its source, as it will be stored: nothing is stored until
// the conversation's first message makes it (Conversation.makeFork), as
// any session is made by its first message. It has the import's history
// and, once Build has chosen them, loom's configured model and provider,
// not the other tool's. On the command line the fork gets a new
// command-line key of the session's project; with a key that is not a
// command-line one (the server's), the fork takes that key outside every
// project, where the key finds it next time.
func (svc *Service) continueImported(src *loom.Session, spec Spec) *loom.Session {
	fk := *src
	fk.ID = loom.NewID()
	fk.Kind, fk.ParentID, fk.ForkTurn = loom.KindFork, src.ID, src.TurnCount
	fk.Title = loom.ForkTitle(src.Title, nil)
	fk.Model, fk.Provider = "", ""
	fk.Usage = loom.Usage{}
	fk.Source, fk.Lock, fk.ArchivedAt, fk.DeletedAt = nil, nil, nil, nil
	fk.Key = loom.CLIKeyAt(src.Project.Name, svc.now())
	if spec.Key != "" && !loom.IsCLIKey(spec.Key) {
		fk.Key = spec.Key
		fk.Project, fk.Cwd = loom.Project{}, ""
	}
	fk.Surface = loom.SurfaceOf(fk.Key)
	return &fk
}
