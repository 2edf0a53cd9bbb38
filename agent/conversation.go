package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/replaylog"
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

// Conversation is one session held for turns: its lock and its agent.
// It is not safe for concurrent use; one turn runs at a time.
type Conversation struct {
	svc     *Service
	spec    Spec
	s       *loom.Session
	loop    *Loop
	lease   *loom.Lease
	resumed bool
	// imported is the imported session the conversation continues in a
	// fork of, nil when it continues none.
	imported *loom.Session
	// forkOf is the imported session that s, not stored yet, is to be a
	// fork of: the first message makes the fork (makeFork). Nil once it
	// is made, and when s is no such fork.
	forkOf *loom.Session
	// forkTitle is the title a rename gave the fork before it was made.
	forkTitle string
}

// ContinuesImported is the session imported from another agent that the
// conversation continues in a fork of (see Service.Open), nil when none.
func (c *Conversation) ContinuesImported() *loom.Session { return c.imported }

// Session is the session the conversation is in (new ones have no
// messages until the first turn). Before the first message of a
// conversation that continues an imported session, it is the fork that
// message will make, with the id it will have and the import's history,
// not stored yet (see Pending).
func (c *Conversation) Session() *loom.Session { return c.s }

// Resumed reports whether the session the conversation is in had
// messages when the conversation took it (a resumed session, a fork, or
// the fork of an imported session that holds the import's history even
// before its first message stores it), rather than a new one its next
// message creates.
func (c *Conversation) Resumed() bool { return c.resumed }

// Pending reports whether the session is the fork of an imported session
// that the next message makes: nothing of it is stored yet.
func (c *Conversation) Pending() bool { return c.forkOf != nil }

// Messages returns a window of the session's messages (see
// Store.Messages); before the fork of an imported session is made, the
// import's, which it will hold.
func (c *Conversation) Messages(ctx context.Context, q loom.MessageQuery) ([]*loom.Message, error) {
	id := c.s.ID
	if c.forkOf != nil {
		id = c.forkOf.ID
	}
	return c.svc.Store.Messages(ctx, id, q)
}

// attach builds the agent of s and takes its lock, then lets go of the
// session held before. A stored session gets its changed model or
// profile stored; a resumed one (not a fork just made) also gets the tool
// calls a dead process left unfinished repaired, and its resume logged.
// forkOf, when not nil, is the imported session that s is the fork of,
// not stored yet: nothing is written until its first message.
func (c *Conversation) attach(ctx context.Context, s *loom.Session, resume bool, forkOf *loom.Session, choice Choice) error {
	before := *s
	loop, err := c.svc.Build(ctx, c.svc.Store, s, choice)
	if err != nil {
		*s = before
		return &UnavailableError{Err: err}
	}
	lease, err := c.svc.Store.Lock(ctx, s.ID)
	if err != nil {
		return err
	}
	if forkOf == nil {
		if err := persistChoice(ctx, c.svc.Store, s, before); err != nil {
			lease.Release(context.WithoutCancel(ctx))
			return err
		}
	}
	if resume && forkOf == nil {
		if _, err := loop.RepairInterrupted(ctx, s); err != nil {
			lease.Release(context.WithoutCancel(ctx))
			return err
		}
		loop.log(s).Write(replaylog.Entry{Kind: replaylog.KindSessionResume, SessionID: s.ID})
	}
	if c.lease != nil {
		c.lease.Release(context.WithoutCancel(ctx))
	}
	c.s, c.loop, c.lease, c.resumed = s, loop, lease, s.MessageCount > 0
	c.forkOf, c.forkTitle = forkOf, ""
	return nil
}

// makeFork stores the fork of an imported session that the conversation
// continues in (see Service.continueImported), as its first message is
// about to be stored: the import's turns up to turn (0: all of them),
// under the id, key, project, model, provider, profile and git branch
// the conversation holds for it, then tool calls the other tool left
// without a result answered as interrupted. Nothing is done once it is
// made, or when the conversation continues no import.
func (c *Conversation) makeFork(ctx context.Context, turn int) error {
	src := c.forkOf
	if src == nil {
		return nil
	}
	want := *c.s
	fk, err := c.svc.Store.Fork(ctx, src.ID, loom.ForkOptions{ID: want.ID, Turn: turn, Title: c.forkTitle})
	if err != nil {
		return fmt.Errorf("fork the imported session %s: %w", src.ID, err)
	}
	u := loom.SessionUpdate{Key: &want.Key, Model: &want.Model, Provider: &want.Provider, Profile: &want.Profile}
	if want.Project != fk.Project {
		u.Project, u.Cwd = &want.Project, &want.Cwd
	}
	if want.GitBranch != fk.GitBranch {
		u.GitBranch = &want.GitBranch
	}
	s, err := c.svc.Store.UpdateSession(ctx, fk.ID, u)
	for tries := 1; loom.ErrorCode(err) == loom.ECONFLICT && want.Key != c.spec.Key && tries < maxKeyTries; tries++ {
		// Another fork took the command-line key made from the same
		// millisecond: take the next one's.
		want.Key = loom.CLIKeyAt(want.Project.Name, c.svc.now().Add(time.Duration(tries)*time.Millisecond))
		s, err = c.svc.Store.UpdateSession(ctx, fk.ID, u)
	}
	if err != nil {
		// The fork is this conversation's alone: leave none half made.
		c.svc.Store.Delete(context.WithoutCancel(ctx), fk.ID, loom.DeleteOptions{Purge: true, Force: true})
		return fmt.Errorf("continue the imported session %s in a fork: %w", src.ID, err)
	}
	*c.s = *s
	c.forkOf, c.forkTitle = nil, ""
	c.loop.log(c.s).Write(replaylog.Entry{Kind: replaylog.KindSessionFork, SessionID: s.ID, ParentID: src.ID})
	if _, err := c.loop.RepairInterrupted(ctx, c.s); err != nil {
		return err
	}
	return nil
}

// Turn runs one user message to its final reply; see Loop.Turn. The
// first message of a conversation that continues an imported session
// first makes the fork it goes into. The first message of a new session
// may find its key taken: another process created a session with it
// after this conversation chose the key. The turn then goes on as rejoin
// says, so the caller should read Session again after it.
func (c *Conversation) Turn(ctx context.Context, text string, emit func(Event)) (*Result, error) {
	if err := c.noteBranch(ctx); err != nil {
		return nil, err
	}
	if err := c.makeFork(ctx, 0); err != nil {
		return nil, err
	}
	for tries := 1; ; tries++ {
		res, err := c.loop.Turn(ctx, c.s, text, emit)
		if tries == maxKeyTries || c.s.MessageCount > 0 || c.s.Key == "" || loom.ErrorCode(err) != loom.ECONFLICT {
			return res, err
		}
		if err := c.rejoin(ctx); err != nil {
			return nil, err
		}
	}
}

// noteBranch records the git branch the session's directory is on now,
// when it can be read and differs from the one recorded: on a session
// its next message creates, in memory; on a stored one, in the store.
func (c *Conversation) noteBranch(ctx context.Context) error {
	b := paths.GitBranch(c.s.Cwd)
	if b == "" || b == c.s.GitBranch {
		return nil
	}
	if !c.stored() {
		c.s.GitBranch = b
		return nil
	}
	s, err := c.svc.Store.UpdateSession(ctx, c.s.ID, loom.SessionUpdate{GitBranch: &b})
	if err != nil {
		return err
	}
	*c.s = *s
	return nil
}

// maxKeyTries bounds how often a turn looks again for a key taken meanwhile.
const maxKeyTries = 3

// rejoin moves a conversation off the new session it was about to
// create, whose key another process has taken since. A key the caller
// asked for, or the plain command-line key of the project, names that
// process's session now: the conversation goes on in it, holding its
// lock (ELOCKED while the other process still holds it). A key the
// service made from the time, for a session of its own (another process
// made one the same millisecond), is made again.
func (c *Conversation) rejoin(ctx context.Context) error {
	s := c.s
	if s.Key != c.spec.Key && s.Key != loom.CLIKey(s.Project.Name) {
		at := c.svc.now()
		if loom.CLIKeyAt(s.Project.Name, at) == s.Key {
			at = at.Add(time.Millisecond)
		}
		s.Key = loom.CLIKeyAt(s.Project.Name, at)
		return nil
	}
	found, exists, err := c.svc.ForKey(ctx, s.UserID, s.Key, s.Project, s.Cwd)
	if err != nil {
		return err
	}
	if !exists {
		return loom.Errorf(loom.ECONFLICT, "the key %q was taken by a session that cannot be found; try again", s.Key)
	}
	return c.attach(ctx, found, true, nil, c.spec.Agent)
}

// stored reports whether the session the conversation is in is stored:
// it has messages and is not a fork its first message makes.
func (c *Conversation) stored() bool { return c.s.MessageCount > 0 && c.forkOf == nil }

// Compact summarises the context now; see Loop.Compact. The summary is
// a message: in a conversation that continues an imported session, it
// makes the fork first.
func (c *Conversation) Compact(ctx context.Context, emit func(Event)) (*loom.Message, error) {
	if c.s.MessageCount == 0 {
		return nil, loom.Errorf(loom.EINVALID, "nothing to compact yet")
	}
	if err := c.makeFork(ctx, 0); err != nil {
		return nil, err
	}
	return c.loop.Compact(ctx, c.s, emit)
}

// Rename sets the session's title; a session not created yet (or a fork
// of an imported session not made yet) takes it when it is made.
func (c *Conversation) Rename(ctx context.Context, title string) error {
	if !c.stored() {
		if err := loom.ValidTitle(title); err != nil {
			return err
		}
		c.s.Title = title
		if c.forkOf != nil {
			c.forkTitle = title
		}
		return nil
	}
	s, err := c.svc.Store.UpdateSession(ctx, c.s.ID, loom.SessionUpdate{Title: &title})
	if err != nil {
		return err
	}
	*c.s = *s
	return nil
}

// Fork forks the session at turn (0: all of it) and continues in the
// fork, holding its lock instead. In a conversation that continues an
// imported session whose fork is not made yet, that fork is made, at
// turn of the import.
func (c *Conversation) Fork(ctx context.Context, turn int) (*loom.Session, error) {
	if c.s.MessageCount == 0 {
		return nil, loom.Errorf(loom.EINVALID, "nothing to fork yet")
	}
	if c.forkOf != nil {
		if err := c.makeFork(ctx, turn); err != nil {
			return nil, err
		}
		return c.s, nil
	}
	fk, err := c.svc.Store.Fork(ctx, c.s.ID, loom.ForkOptions{Turn: turn})
	if err != nil {
		return nil, err
	}
	c.loop.log(c.s).Write(replaylog.Entry{Kind: replaylog.KindSessionFork, SessionID: fk.ID, ParentID: c.s.ID})
	if err := c.attach(ctx, fk, false, nil, Choice{Model: c.spec.Agent.Model}); err != nil {
		return nil, err
	}
	return fk, nil
}

// Rewind takes the session back to the end of turn (see Store.Rewind)
// and stays in it; it returns the fork that holds the later turns. In a
// conversation that continues an imported session whose fork is not
// made yet, the fork is made at turn instead, and the later turns stay
// where they are, in the import, which it returns.
func (c *Conversation) Rewind(ctx context.Context, turn int) (*loom.Session, error) {
	if src := c.forkOf; src != nil {
		// The turns are the import's until its fork is made.
		if err := src.CheckRewindTurn(turn); err != nil {
			return nil, err
		}
		if err := c.makeFork(ctx, turn); err != nil {
			return nil, err
		}
		return src, nil
	}
	fk, err := c.svc.Store.Rewind(ctx, c.s.ID, loom.RewindOptions{Turn: turn})
	if err != nil {
		return nil, err
	}
	s, err := c.svc.Store.Session(ctx, c.s.ID)
	if err != nil {
		return nil, err
	}
	*c.s = *s
	c.loop.log(c.s).Write(replaylog.Entry{Kind: replaylog.KindSessionFork, SessionID: fk.ID, ParentID: c.s.ID})
	return fk, nil
}

// New leaves this session (it is kept) for a new command-line session of
// the same project, with the same model, provider and profile.
func (c *Conversation) New(ctx context.Context) error {
	old := c.s
	next := c.svc.fresh(c.spec, loom.CLIKeyAt(c.spec.Project.Name, c.svc.now()))
	next.Model, next.Provider, next.Profile = old.Model, old.Provider, old.Profile
	return c.attach(ctx, next, false, nil, Choice{Model: c.spec.Agent.Model})
}

// SetProfile switches the profile (and with it the model, when the
// profile names one) of this session.
func (c *Conversation) SetProfile(ctx context.Context, name string) error {
	before := *c.s
	loop, err := c.svc.Build(ctx, c.svc.Store, c.s, Choice{Profile: name, Model: c.spec.Agent.Model})
	if err != nil {
		*c.s = before
		return err
	}
	if c.forkOf == nil {
		if err := persistChoice(ctx, c.svc.Store, c.s, before); err != nil {
			return err
		}
	}
	c.loop = loop
	return nil
}

// Close releases the session's lock and, when it holds messages, logs
// the end of the session in the replay log.
func (c *Conversation) Close(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if c.lease != nil {
		c.lease.Release(ctx)
		c.lease = nil
	}
	if c.s != nil && c.stored() {
		c.loop.log(c.s).Write(replaylog.Entry{Kind: replaylog.KindSessionEnd, SessionID: c.s.ID})
	}
}

// persistChoice stores a changed model, provider or profile on an
// existing session, so a later resume restores it.
func persistChoice(ctx context.Context, st loom.Store, s *loom.Session, before loom.Session) error {
	if s.MessageCount == 0 || (s.Model == before.Model && s.Provider == before.Provider && s.Profile == before.Profile) {
		return nil
	}
	updated, err := st.UpdateSession(ctx, s.ID, loom.SessionUpdate{Model: &s.Model, Provider: &s.Provider, Profile: &s.Profile})
	if err != nil {
		return err
	}
	*s = *updated
	return nil
}
