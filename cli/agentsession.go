package cli

import (
	"context"

	"github.com/loomhq/loom"
)

// sessionChoice is how a command names the session to work in.
type sessionChoice struct {
	New      bool
	Continue bool
	Resume   string
	Key      string
}

// chooseSession finds the session to use, or prepares a new one that the
// first message will create. With resumeCurrent (chat without flags) it
// resumes this project's most recently active command-line session.
func (f *Factory) chooseSession(ctx context.Context, st loom.Store, c sessionChoice, resumeCurrent bool) (*loom.Session, bool, error) {
	project, err := f.Project()
	if err != nil {
		return nil, false, err
	}
	cwd, _ := f.Cwd()
	fresh := func(key string) *loom.Session {
		return &loom.Session{ID: loom.NewID(), UserID: f.User(), Key: key, Surface: loom.SurfaceOf(key), Project: project, Cwd: cwd}
	}
	newKey := func() string { return loom.CLIKeyAt(project.Name, f.now()) }
	switch {
	case c.Resume != "":
		s, err := f.Resolve(ctx, st, c.Resume)
		return s, err == nil, err
	case c.Key != "":
		filter := loom.SessionFilter{UserID: f.User(), Key: c.Key, Limit: 1}
		if loom.SurfaceOf(c.Key) == "cli" {
			filter.ProjectID = project.ID
		}
		found, err := st.Sessions(ctx, filter)
		if err != nil {
			return nil, false, err
		}
		if len(found) > 0 {
			return found[0], true, nil
		}
		s := fresh(c.Key)
		if s.Surface != "cli" {
			s.Project = loom.Project{}
		}
		return s, false, nil
	case c.New:
		return fresh(newKey()), false, nil
	case c.Continue || resumeCurrent:
		s, err := f.currentSession(ctx, st, project)
		if err != nil {
			return nil, false, err
		}
		if s != nil {
			return s, true, nil
		}
		if err := f.printMovedProjectHint(ctx, st, project); err != nil {
			return nil, false, err
		}
		if c.Continue {
			return nil, false, loom.Errorf(loom.ENOTFOUND, "no session to continue in project %s (%s)", project.Name, project.Root)
		}
		// The project's first session takes the plain key when it is free.
		taken, err := st.Sessions(ctx, loom.SessionFilter{UserID: f.User(), ProjectID: project.ID, Key: loom.CLIKey(project.Name), Limit: 1})
		if err != nil {
			return nil, false, err
		}
		if len(taken) == 0 {
			return fresh(loom.CLIKey(project.Name)), false, nil
		}
		return fresh(newKey()), false, nil
	}
	return fresh(newKey()), false, nil
}

// currentSession is this project's most recently active command-line
// session that a user works in directly (not a sub-agent's).
func (f *Factory) currentSession(ctx context.Context, st loom.Store, project loom.Project) (*loom.Session, error) {
	var cur *loom.Cursor
	for {
		page, err := st.Sessions(ctx, loom.SessionFilter{UserID: f.User(), ProjectID: project.ID, Surface: "cli", Limit: 20, Before: cur})
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
