package session

import (
	"context"
	"fmt"
	"strconv"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
)

// teamFork copies turns 1..N of a teammate's session, from the team's
// store on this machine, into a new session of one's own in this
// project: new ids, the messages as they are (their authors are the
// teammate's session's), the origin in the description.
func teamFork(ctx context.Context, inv *command.Invocation, opts *ForkOptions) (*loom.Session, error) {
	path, tm, err := inv.TeamStoreFile(opts.Team)
	if err != nil {
		return nil, err
	}
	ts, err := inv.OpenStore(ctx, "sqlite:"+path, command.AccessRead)
	if err != nil {
		return nil, err
	}
	defer ts.Close()
	src, err := inv.Scope().Resolve(ctx, ts, opts.Ref)
	if err != nil {
		return nil, err
	}
	turn := opts.Turn
	if !opts.HasTurn {
		turn = src.TurnCount
	}
	if err := src.CheckForkTurn(turn); err != nil {
		return nil, command.UsageErrorf("%s", loom.ErrorMessage(err))
	}
	msgs, err := ts.Messages(ctx, src.ID, loom.MessageQuery{})
	if err != nil {
		return nil, err
	}
	p, err := inv.Project()
	if err != nil {
		return nil, err
	}
	now := inv.TimeNow().UTC()
	id := loom.NewIDAt(now)
	author := src.Member
	title := opts.Name
	if title == "" {
		title = src.Title + " (from @" + author + ")"
	}
	s := &loom.Session{
		ID: id, Key: loom.SurfaceCLI + ":" + p.Name + ":" + strconv.FormatInt(now.UnixMilli(), 10),
		// A fork of turns 1..turn: its inherited history is counted in
		// the teammate's session, by every report alike (loom usage read
		// the session's sums, its reports by time the messages').
		Title: title, UserID: inv.User(), Surface: loom.SurfaceCLI, Kind: loom.KindFork, ForkTurn: turn,
		Project: p, Cwd: p.Root, Model: src.Model, Provider: src.Provider, Profile: src.Profile,
		GitBranch: src.GitBranch, CreatedAt: now, UpdatedAt: now,
		Description: fmt.Sprintf("forked from @%s's session %s (team %s) at turn %d of %d", author, src.ID, tm.Name, turn, src.TurnCount),
	}
	var copied []*loom.Message
	for _, m := range msgs {
		if m.Turn > turn {
			break
		}
		c := *m
		c.ID, c.SessionID = loom.NewIDAt(m.CreatedAt), id
		copied = append(copied, &c)
	}
	own, err := inv.CreateStore(ctx)
	if err != nil {
		return nil, err
	}
	if err := own.Import(ctx, []*loom.SessionData{{Session: s, Messages: copied}}); err != nil {
		return nil, err
	}
	return own.Session(ctx, id)
}
