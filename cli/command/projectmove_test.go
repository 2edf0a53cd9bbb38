package command_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

// MoveSession renames a key made from the old project's name after the
// new one; where the new project has that key, the session gets one made
// from the time given, counting on past keys taken too. Other keys stay.
func TestMoveSession(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	to := loom.Project{ID: "cccccccccccccccc", Name: "api-service", Root: "/src/api-service"}
	at := time.Date(2025, 2, 3, 4, 5, 6, 0, time.UTC)
	addSession(t, st, &loom.Session{Key: "cli:api-service", Project: to}, "the new project's current session")
	addSession(t, st, &loom.Session{Key: loom.CLIKeyAt("api-service", at), Project: to}, "another")
	for _, tc := range []struct {
		key, want string
	}{
		{"cli:api:1700000000000", "cli:api-service:1700000000000"},
		{"telegram:9", "telegram:9"},
		{"", ""},
		// cli:api-service and the key made at at are taken.
		{"cli:api", loom.CLIKeyAt("api-service", at.Add(time.Millisecond))},
	} {
		s := addSession(t, st, &loom.Session{Key: tc.key, Project: apiProject}, "hi")
		cwd := "/src/api-service/cmd"
		moved, err := command.MoveSession(ctx, st, s, loom.SessionUpdate{Project: &to, Cwd: &cwd}, at)
		if err != nil {
			t.Fatalf("move %q: %v", tc.key, err)
		}
		if moved.Key != tc.want || moved.Project != to || moved.Cwd != cwd {
			t.Errorf("move %q: key %q project %+v cwd %q, want %q", tc.key, moved.Key, moved.Project, moved.Cwd, tc.want)
		}
	}
}

// A project's move, as loom session move and adoption make it
// (loom.ProjectMover), moves every session of the project, trashed ones
// included, renaming keys made from the old project's name after the
// new one (a key the new project has already made from the creation
// time), and returns them live newest first, then the trash; a move
// without a user moves nothing.
func TestMoveProjectKeys(t *testing.T) {
	ctx := context.Background()
	to := loom.Project{ID: "cccccccccccccccc", Name: "api-service", Root: "/src/api-service"}
	move := loom.ProjectMove{UserID: "local", From: apiProject.ID, To: to, KeepUpdatedAt: true}
	st := openStore(t)
	addSession(t, st, &loom.Session{Key: "cli:api-service", Project: to}, "current there")
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var data []*loom.SessionData
	for j, key := range []string{"cli:api", "cli:api:5", "", "telegram:1"} {
		at := created.Add(time.Duration(j) * time.Minute)
		data = append(data, &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "local", Key: key, Project: apiProject, CreatedAt: at, UpdatedAt: at}})
	}
	if err := st.Import(ctx, data); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, data[1].Session.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	moved, err := st.MoveProject(ctx, move)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 4 {
		t.Fatalf("moved %d, want 4", len(moved))
	}
	// Live newest first, then the trash.
	keys := []string{"telegram:1", "", loom.CLIKeyAt("api-service", created), "cli:api-service:5"}
	for i, s := range moved {
		if s.Key != keys[i] || s.Project != to || (s.DeletedAt != nil) != (i == 3) {
			t.Errorf("moved session %d keyed %q in %+v (trashed %v), want %q", i, s.Key, s.Project, s.DeletedAt != nil, keys[i])
		}
	}
	if _, err := openStore(t).MoveProject(ctx, loom.ProjectMove{From: apiProject.ID, To: to}); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("a move without a user: %v", err)
	}
}

// A project with no sessions hears of sessions of a project of the same
// name whose root is gone, and how to bring them here; a root that still
// exists, or a clone of this project elsewhere, is no such project.
func TestPrintMovedProjectHint(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	here := loom.Project{ID: "dddddddddddddddd", Name: "api", Root: filepath.Join(t.TempDir(), "api")}
	gone := loom.Project{ID: "eeeeeeeeeeeeeeee", Name: "api", Root: "/nowhere/api"}
	spaced := loom.Project{ID: "ffffffffffffffff", Name: "api", Root: "/nowhere/my api"}
	exists := loom.Project{ID: "1212121212121212", Name: "api", Root: t.TempDir()}
	clone := loom.Project{ID: here.ID, Name: "api", Root: "/nowhere/clone/api"}
	for _, p := range []loom.Project{gone, gone, spaced, exists, clone} {
		addSession(t, st, &loom.Session{Project: p}, "hi")
	}
	addSession(t, st, &loom.Session{UserID: "bob", Project: loom.Project{ID: "3434343434343434", Name: "api", Root: "/nowhere/bob"}}, "hi")

	ios, _, _, errOut := term.Test()
	if err := command.PrintMovedProjectHint(ctx, ios, "local", st, here); err != nil {
		t.Fatal(err)
	}
	// The most recently active first.
	want := "1 session of api belongs to /nowhere/my api, which no longer exists; move it here with: loom session move --from '/nowhere/my api'\n" +
		"2 sessions of api belong to /nowhere/api, which no longer exists; move them here with: loom session move --from /nowhere/api\n"
	if errOut.String() != want {
		t.Fatalf("hint:\n%s\nwant:\n%s", errOut, want)
	}
	errOut.Reset()
	other := loom.Project{ID: "5656565656565656", Name: "web", Root: t.TempDir()}
	if err := command.PrintMovedProjectHint(ctx, ios, "local", st, other); err != nil || errOut.Len() != 0 {
		t.Fatalf("a project of another name: %q, %v", errOut, err)
	}
}

func TestSessionLabel(t *testing.T) {
	for _, tc := range []struct {
		s    loom.Session
		want string
	}{
		{loom.Session{Title: "plan", Key: "cli:api"}, `"plan"`},
		{loom.Session{Key: "cli:api"}, "(cli:api)"},
		{loom.Session{}, "(untitled)"},
	} {
		if got := command.SessionLabel(&tc.s); got != tc.want {
			t.Errorf("SessionLabel(%+v) = %s, want %s", tc.s, got, tc.want)
		}
	}
}
