package conformance

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// importAt imports a session of user keyed key in project p, made at
// at (its creation and update time), without messages.
func importAt(t *testing.T, st loom.Store, user, key string, p loom.Project, at time.Time) *loom.Session {
	t.Helper()
	s := newSession(user, key)
	s.Project, s.Cwd = p, p.Root
	s.CreatedAt, s.UpdatedAt = at, at
	if err := st.Import(ctx(t), []*loom.SessionData{{Session: s}}); err != nil {
		t.Fatalf("import %s: %v", key, err)
	}
	return s
}

// projectSessions is what a move of user's sessions of project id moves,
// in the order it returns them: the live ones (archived included)
// newest first, then the trashed ones.
func projectSessions(t *testing.T, st loom.Store, user, id string) []*loom.Session {
	t.Helper()
	var out []*loom.Session
	for _, deleted := range []bool{false, true} {
		list, err := st.Sessions(ctx(t), loom.SessionFilter{UserID: user, ProjectID: id, Deleted: deleted, Archived: loom.WithArchived})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, list...)
	}
	return out
}

func ids(sessions []*loom.Session) []string {
	out := make([]string, len(sessions))
	for i, s := range sessions {
		out[i] = s.ID
	}
	return out
}

// MoveProject moves a user's sessions of one project, live, archived and
// trashed, to another, in one transaction: command-line keys follow the
// new project's name, a key the new project's live sessions hold already
// is resolved with a key made from the clock (counting on past one taken
// too), a trashed session keeps its renamed key, other keys and other
// users' and projects' sessions stay, times stay with KeepUpdatedAt. A
// clash the rule cannot resolve, met after other sessions were written,
// and a cancelled context, leave every session where it was. Where the
// store keeps a sync log, the move records what updating each session
// alone records.
func testMoveProject(t *testing.T, open Opener) {
	st := open(t)
	mover := loom.ProjectMover(st)
	old := loom.Project{ID: "1111111111111111", Name: "api", Root: "/old/api"}
	repo := loom.Project{ID: "2222222222222222", Name: "api-service", Root: "/src/api-service"}
	elsewhere := loom.Project{ID: "3333333333333333", Name: "api", Root: "/other/api"}
	base := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }

	// Oldest first, so that the move (newest first) meets the clash it
	// cannot resolve (hook) after it has written the others.
	hook := importAt(t, st, "alice", "http:hook", old, at(0))
	trashed := importAt(t, st, "alice", "cli:api", old, at(1))
	if _, err := st.Delete(ctx(t), trashed.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	current := importAt(t, st, "alice", "cli:api", old, at(2))
	archived := importAt(t, st, "alice", "cli:api:1700000000000", old, at(3))
	yes := true
	if _, err := st.UpdateSession(ctx(t), archived.ID, loom.SessionUpdate{Archived: &yes}); err != nil {
		t.Fatal(err)
	}
	other := importAt(t, st, "alice", "telegram:9", old, at(4))
	unkeyed := importAt(t, st, "alice", "", old, at(5))
	bob := importAt(t, st, "bob", "cli:api", old, at(6))
	away := importAt(t, st, "alice", "cli:api", elsewhere, at(7))
	// The new project's current session, and one keyed with the key
	// current would get first in its place.
	there := importAt(t, st, "alice", "cli:api-service", repo, at(8))
	stamped := importAt(t, st, "alice", loom.CLIKeyAt("api-service", current.CreatedAt), repo, at(9))
	blocker := importAt(t, st, "alice", "http:hook", repo, at(10))

	before := projectSessions(t, st, "alice", old.ID)
	if len(before) != 6 || before[len(before)-1].ID != trashed.ID || before[len(before)-2].ID != hook.ID {
		t.Fatalf("alice's sessions of the old project, in a move's order: %v", ids(before))
	}
	unchanged := func(what string) {
		t.Helper()
		for _, b := range append(before, bob, away, there, stamped) {
			got, err := st.Session(ctx(t), b.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Project != b.Project || got.Key != b.Key || got.Cwd != b.Cwd || !got.UpdatedAt.Equal(b.UpdatedAt) {
				t.Fatalf("%s changed %s: project %+v key %q cwd %q updated %s; was %+v %q %q %s",
					what, b.ID, got.Project, got.Key, got.Cwd, got.UpdatedAt, b.Project, b.Key, b.Cwd, b.UpdatedAt)
			}
		}
	}
	move := loom.ProjectMove{UserID: "alice", From: old.ID, To: repo, KeepUpdatedAt: true}

	moveRefused(t, mover, move, old, repo, unchanged)

	hook2 := "http:hook2"
	if _, err := st.UpdateSession(ctx(t), blocker.ID, loom.SessionUpdate{Key: &hook2}); err != nil {
		t.Fatal(err)
	}
	moved, err := mover.MoveProject(ctx(t), move)
	if err != nil {
		t.Fatalf("move: %v", err)
	}
	if got, want := ids(moved), ids(before); !slices.Equal(got, want) {
		t.Fatalf("moved %v, want %v (live newest first, then trashed)", got, want)
	}
	wantKeys := map[string]string{
		hook.ID: "http:hook",
		// The trash keeps keys no live session is kept from.
		trashed.ID: "cli:api-service",
		// cli:api-service is the new project's current session's, and
		// the key made from current's creation time is stamped's.
		current.ID:  loom.CLIKeyAt("api-service", current.CreatedAt.Add(time.Millisecond)),
		archived.ID: "cli:api-service:1700000000000",
		other.ID:    "telegram:9",
		unkeyed.ID:  "",
	}
	checkMoved(t, st, moved, before, repo, wantKeys)
	if left := projectSessions(t, st, "alice", old.ID); len(left) != 0 {
		t.Fatalf("alice still has %v in the old project", ids(left))
	}
	before = nil
	unchanged("the move") // bob's, another project's, the new project's own
}

// moveRefused: a move that meets a clash, or whose context is cancelled,
// moves nothing; nor does one with nothing to move or no user.
func moveRefused(t *testing.T, mover loom.ProjectMover, move loom.ProjectMove, old, repo loom.Project, unchanged func(string)) {
	// A key of another surface the new project has already: ECONFLICT,
	// and the sessions written before it are not moved either.
	_, err := mover.MoveProject(ctx(t), move)
	wantCode(t, err, loom.ECONFLICT)
	unchanged("a move that met a clash")

	// A cancelled context moves nothing.
	cancelled, cancel := context.WithCancel(ctx(t))
	cancel()
	if _, err := mover.MoveProject(cancelled, move); err == nil {
		t.Fatal("a move with a cancelled context succeeded")
	}
	unchanged("a move with a cancelled context")

	// Nothing to move, or a move that names no user: nothing happens.
	if got, err := mover.MoveProject(ctx(t), loom.ProjectMove{UserID: "carol", From: old.ID, To: repo}); err != nil || len(got) != 0 {
		t.Fatalf("moving a project carol has no sessions in: %d, %v", len(got), err)
	}
	_, err = mover.MoveProject(ctx(t), loom.ProjectMove{From: old.ID, To: repo})
	wantCode(t, err, loom.EINVALID)
}

// checkMoved: each moved session, as returned and as stored, is in repo
// with the key wantKeys gives it, and keeps its cwd, times and state.
func checkMoved(t *testing.T, st loom.Store, moved, before []*loom.Session, repo loom.Project, wantKeys map[string]string) {
	for i, got := range moved {
		b := before[i]
		stored, err := st.Session(ctx(t), b.ID)
		if err != nil {
			t.Fatal(err)
		}
		jsonEqual(t, "a moved session as returned and as stored", got, stored)
		if got.Project != repo || got.Key != wantKeys[b.ID] || got.Cwd != b.Cwd {
			t.Errorf("%s: project %+v key %q cwd %q, want %+v %q %q", b.ID, got.Project, got.Key, got.Cwd, repo, wantKeys[b.ID], b.Cwd)
		}
		if !got.UpdatedAt.Equal(b.UpdatedAt) || (got.ArchivedAt == nil) != (b.ArchivedAt == nil) || (got.DeletedAt == nil) != (b.DeletedAt == nil) {
			t.Errorf("%s: updated %s archived %v deleted %v; was %s %v %v", b.ID, got.UpdatedAt, got.ArchivedAt, got.DeletedAt, b.UpdatedAt, b.ArchivedAt, b.DeletedAt)
		}
	}
}

// SyncLogger is a store that keeps a sync log of its changes once sync
// is set up on it (SQLite's; a PostgreSQL store keeps none, and is
// shared by its users' machines already).
type SyncLogger interface {
	loom.Engine
	EnableSync(ctx context.Context) (synclog.HostID, error)
	SyncLast(ctx context.Context) (int64, error)
	SyncLog(ctx context.Context, after int64, limit int) ([]synclog.LogRecord, error)
}

// RunProjectMoveLog checks, on a new empty store that keeps a sync log,
// that a project's move records, for each session it moves, the record
// updating it alone records. An engine whose store keeps a sync log
// runs it beside Run.
func RunProjectMoveLog(t *testing.T, st SyncLogger) {
	sl := st
	if _, err := sl.EnableSync(ctx(t)); err != nil {
		t.Fatalf("enable sync: %v", err)
	}
	from := loom.Project{ID: "4444444444444444", Name: "web", Root: "/old/web"}
	to := loom.Project{ID: "5555555555555555", Name: "site", Root: "/src/site"}
	cwd := "/src/site/docs"
	base := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	for _, user := range []string{"carol", "dave"} {
		for i, key := range []string{"cli:web", "cli:web:5", "", "http:x"} {
			importAt(t, st, user, key, from, base.Add(time.Duration(i)*time.Minute))
		}
	}
	logSince := func(mark int64) []synclog.Payload {
		t.Helper()
		recs, err := sl.SyncLog(ctx(t), mark, 1000)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]synclog.Payload, len(recs))
		for i, r := range recs {
			if out[i], err = synclog.Decode(r.Payload); err != nil {
				t.Fatalf("record %d: %v", r.Index, err)
			}
		}
		return out
	}
	last := func() int64 {
		t.Helper()
		n, err := sl.SyncLast(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	mark := last()
	moved, err := st.MoveProject(ctx(t), loom.ProjectMove{UserID: "carol", From: from.ID, To: to, Cwd: &cwd})
	if err != nil || len(moved) != 4 {
		t.Fatalf("move with sync: %d moved, %v", len(moved), err)
	}
	byMove := logSince(mark)

	mark = last()
	alone := projectSessions(t, st, "dave", from.ID)
	for _, s := range alone {
		u := loom.SessionUpdate{Project: &to, Cwd: &cwd}
		if key, ok := loom.MovedKey(s.Key, s.Project.Name, to.Name); ok {
			u.Key = &key
		}
		if _, err := st.UpdateSession(ctx(t), s.ID, u); err != nil {
			t.Fatal(err)
		}
	}
	byUpdates := logSince(mark)

	if len(byMove) != len(moved) || len(byUpdates) != len(alone) {
		t.Fatalf("the move recorded %d changes of %d sessions, the updates %d of %d", len(byMove), len(moved), len(byUpdates), len(alone))
	}
	for i := range byMove {
		m, ok1 := byMove[i].(*synclog.SessionChanged)
		u, ok2 := byUpdates[i].(*synclog.SessionChanged)
		if !ok1 || !ok2 {
			t.Fatalf("record %d: the move recorded %T, an update %T", i, byMove[i], byUpdates[i])
		}
		if m.SessionID != moved[i].ID || u.SessionID != alone[i].ID {
			t.Fatalf("record %d is of %s and %s, want %s and %s", i, m.SessionID, u.SessionID, moved[i].ID, alone[i].ID)
		}
		if m.At == nil || !m.At.Equal(moved[i].UpdatedAt) || u.At == nil {
			t.Fatalf("record %d: the move's is at %v, the session updated at %s; the update's at %v", i, m.At, moved[i].UpdatedAt, u.At)
		}
		mc, uc := *m, *u
		mc.SessionID, mc.At, uc.SessionID, uc.At = "", nil, "", nil
		jsonEqual(t, "the move's record beside an update's", mc, uc)
	}
}
