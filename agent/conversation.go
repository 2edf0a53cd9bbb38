package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/replaylog"
)

// Conversation is one session held for turns: its lock and its agent.
// It is not safe for concurrent use; one turn runs at a time.
type Conversation struct {
	svc     *Service
	spec    Spec
	s       *loom.Session
	loop    *Loop
	lease   loom.Lease
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
	fresh := c.s.MessageCount == 0 && c.forkOf == nil
	before := *c.s
	for tries := 1; ; tries++ {
		res, err := c.loop.Turn(ctx, c.s, text, emit)
		if fresh && IsUnreachable(err) {
			c.forgetUnreached(ctx, before)
		}
		if tries == maxKeyTries || c.s.MessageCount > 0 || c.s.Key == "" || loom.ErrorCode(err) != loom.ECONFLICT {
			return res, err
		}
		if err := c.rejoin(ctx); err != nil {
			return nil, err
		}
	}
}

// forgetUnreached removes the session the turn's prompt created when the
// provider could not be reached: it holds that prompt alone, and would
// sit in the picker as a session that never got an answer. The prompt
// stays where the user sent it from (chat's input history, the command
// line) to send again; the conversation is back to a session its next
// message creates, under the same id and key, with its lock taken
// again. When the session cannot be removed it stays as it is.
func (c *Conversation) forgetUnreached(ctx context.Context, before loom.Session) {
	if c.s.MessageCount != 1 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if _, err := c.svc.Store.Delete(ctx, c.s.ID, loom.DeleteOptions{Purge: true, Force: true}); err != nil {
		return
	}
	if c.lease != nil {
		c.lease.Release(ctx)
		c.lease = nil
	}
	*c.s = before
	if lease, err := c.svc.Store.Lock(ctx, c.s.ID); err == nil {
		c.lease = lease
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
