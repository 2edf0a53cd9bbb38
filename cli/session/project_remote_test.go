package session_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/paths"
)

// gitWorkTree makes a git work tree at dir with git init, and adds its
// origin when url is not empty. git runs apart from the user's and the
// system's config.
func gitWorkTree(t *testing.T, dir, url string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "init", "-q")
	if url != "" {
		runGit(t, dir, "remote", "add", "origin", url)
	}
	// The project root as loom reports it, symlinks resolved.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

func runGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func listJSON(t *testing.T, r clitest.Result) []*loom.Session {
	t.Helper()
	return clitest.DecodeJSON[[]*loom.Session](t, r.Stdout)
}

func sessionIDs(list []*loom.Session) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

// Two clones of one repository, at different paths under different
// names (two machines sharing a store), are one project: a session made
// in one is listed and continued in the other, and keyed after the
// repository in both. A work tree without a remote is a project of its
// own, by its path.
func TestClonesOfOneRepositoryAreOneProject(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	laptop := gitWorkTree(t, filepath.Join(fx.Home, "laptop", "src", "api"), "git@github.com:acme/api.git")
	desktop := gitWorkTree(t, filepath.Join(fx.Home, "desktop", "work", "api-service"), "https://me@github.com/acme/api.git/")
	plain := gitWorkTree(t, filepath.Join(fx.Home, "scratch"), "")

	fx.Srv.Enqueue(openaitest.Reply{Text: "hello from the laptop"})
	made := clitest.SessionOf(t, fx.LoomIn(t, laptop, "run", "start the retry work").Stderr)

	list := listJSON(t, fx.LoomIn(t, desktop, "session", "list", "--json"))
	if len(list) != 1 || list[0].ID != made {
		t.Fatalf("the other clone lists %v, want [%s]", sessionIDs(list), made)
	}
	want := loom.Project{ID: paths.ProjectID("github.com/acme/api"), Name: "api", Root: laptop}
	if list[0].Project != want || !strings.HasPrefix(list[0].Key, "cli:api:") {
		t.Fatalf("session made in the laptop's clone: project %+v key %q, want %+v and cli:api:…", list[0].Project, list[0].Key, want)
	}

	fx.Srv.Enqueue(openaitest.Reply{Text: "and from the desktop"})
	if got := clitest.SessionOf(t, fx.LoomIn(t, desktop, "run", "-c", "go on").Stderr); got != made {
		t.Fatalf("run -c in the other clone continued %s, want %s", got, made)
	}
	fx.Srv.Enqueue(openaitest.Reply{Text: "a new one"})
	fresh := clitest.SessionOf(t, fx.LoomIn(t, desktop, "run", "something else").Stderr)
	s := clitest.ShowSession(t, fx, fresh)
	if s.Project.ID != want.ID || s.Project.Root != desktop || !strings.HasPrefix(s.Key, "cli:api:") {
		t.Fatalf("session made in api-service/: project %+v key %q, want the repository's id and name", s.Project, s.Key)
	}
	if list := listJSON(t, fx.LoomIn(t, laptop, "session", "list", "--json")); len(list) != 2 {
		t.Fatalf("the first clone lists %v, want both sessions", sessionIDs(list))
	}

	if list := listJSON(t, fx.LoomIn(t, plain, "session", "list", "--json")); len(list) != 0 {
		t.Fatalf("a work tree without a remote lists %v", sessionIDs(list))
	}
	fx.Srv.Enqueue(openaitest.Reply{Text: "scratch"})
	s = clitest.ShowSession(t, fx, clitest.SessionOf(t, fx.LoomIn(t, plain, "run", "note").Stderr))
	if s.Project.ID != paths.ProjectID(plain) || s.Project.Name != "scratch" {
		t.Fatalf("a work tree without a remote: %+v, want its path's id", s.Project)
	}
}

// A store written before loom identified projects by their remote holds
// a clone's sessions under its path's id. The first command in the clone
// moves them all (live, archived, trashed, sub-agent sessions) to the
// repository's project, without touching their times, renaming keys
// after the repository; another user's and another project's stay. The
// next command finds nothing to do.
func TestAdoptProjectMovesOldSessionsOnce(t *testing.T) {
	t.Parallel()
	fx := &clitest.AgentFixture{Fixture: clitest.NewEmptyFixture(t)}
	ctx := context.Background()
	root := gitWorkTree(t, filepath.Join(fx.Home, "src", "api-service"), "")
	old := clitest.MustProject(t, root)
	st := fx.OpenStore(t)
	at := func(min int) time.Time { return clitest.Base.Add(time.Duration(min) * time.Minute) }
	add := func(s *loom.Session) *loom.Session {
		t.Helper()
		if err := st.Append(ctx, s, clitest.TextMsg(loom.RoleUser, "prompt of "+s.Title, s.CreatedAt)); err != nil {
			t.Fatal(err)
		}
		return s
	}
	mk := func(min int, user, key, title string, p loom.Project) *loom.Session {
		return &loom.Session{ID: clitest.IDAt(at(min)), UserID: user, Key: key, Title: title, Project: p, Cwd: p.Root, CreatedAt: at(min)}
	}
	current := add(mk(0, "local", "cli:api-service", "current", old))
	stamped := add(mk(1, "local", "cli:api-service:1700000000000", "archived", old))
	yes := true
	if _, err := st.UpdateSession(ctx, stamped.ID, loom.SessionUpdate{Archived: &yes}); err != nil {
		t.Fatal(err)
	}
	trashed := add(mk(2, "local", "cli:api-service:2", "trashed", old))
	if _, err := st.Delete(ctx, trashed.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	sub := mk(3, "local", "", "sub-agent", old)
	sub.Kind, sub.ParentID = loom.KindSubagent, current.ID
	add(sub)
	bob := add(mk(4, "bob", "cli:api-service", "bob's", old))
	web := add(mk(5, "local", "cli:web", "web", fx.OtherP))

	runGit(t, root, "remote", "add", "origin", "git@github.com:acme/api.git")
	repo := clitest.MustProject(t, root)
	// The repository's current session, made on another machine.
	elsewhere := add(mk(6, "local", "cli:api", "from the other machine", loom.Project{ID: repo.ID, Name: "api", Root: "/home/other/src/api"}))

	before := map[string]*loom.Session{}
	for _, s := range []*loom.Session{current, stamped, trashed, sub, bob, web, elsewhere} {
		got, err := st.Session(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		before[s.ID] = got
	}

	// The live sessions, in the order of their times from before.
	list := listJSON(t, fx.LoomIn(t, root, "session", "list", "--json"))
	if got, want := sessionIDs(list), []string{elsewhere.ID, sub.ID, current.ID}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("list after the move = %v, want %v", got, want)
	}
	wantKeys := map[string]string{
		// cli:api is the other machine's: the moved one gets its own.
		current.ID: loom.CLIKeyAt("api", current.CreatedAt),
		stamped.ID: "cli:api:1700000000000",
		trashed.ID: "cli:api:2",
		sub.ID:     "",
	}
	after := map[string]*loom.Session{}
	for id, b := range before {
		got, err := st.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		after[id] = got
		key, moves := wantKeys[id]
		switch {
		case !moves:
			if got.Project != b.Project || got.Key != b.Key {
				t.Errorf("%s (%s) moved: %+v %q", b.Title, b.UserID, got.Project, got.Key)
			}
		case got.Project != repo || got.Key != key:
			t.Errorf("%s: project %+v key %q, want %+v %q", b.Title, got.Project, got.Key, repo, key)
		}
		if !got.UpdatedAt.Equal(b.UpdatedAt) || got.Cwd != b.Cwd || (got.ArchivedAt == nil) != (b.ArchivedAt == nil) || (got.DeletedAt == nil) != (b.DeletedAt == nil) {
			t.Errorf("%s: updated %s (was %s), cwd %q, archived %v, deleted %v", b.Title, got.UpdatedAt, b.UpdatedAt, got.Cwd, got.ArchivedAt, got.DeletedAt)
		}
	}

	// Nothing left to do: the next command changes nothing.
	fx.LoomIn(t, root, "session", "list")
	for id, a := range after {
		got, _ := st.Session(ctx, id)
		if got.Project != a.Project || got.Key != a.Key || !got.UpdatedAt.Equal(a.UpdatedAt) {
			t.Errorf("second run changed %s: %+v", a.Title, got)
		}
	}
	// Bob's move when bob runs loom there.
	fx.LoomIn(t, root, "--user", "bob", "session", "list")
	if got, _ := st.Session(ctx, bob.ID); got.Project != repo || got.Key != "cli:api" {
		t.Errorf("bob's session: %+v %q", got.Project, got.Key)
	}
	// A trashed session comes back where it now belongs.
	fx.LoomIn(t, root, "session", "restore", trashed.ID)
	list = listJSON(t, fx.LoomIn(t, root, "session", "list", "--json"))
	i := slices.IndexFunc(list, func(s *loom.Session) bool { return s.ID == trashed.ID })
	if len(list) != 4 || i < 0 || list[i].Project != repo || list[i].Key != "cli:api:2" {
		t.Errorf("after restore the clone lists %v; want the restored %s among them, in %+v, keyed cli:api:2", sessionIDs(list), trashed.ID, repo)
	}
}

// countingStore counts the calls adoptProject makes: a project's move
// counts as an update, as a session's does.
type countingStore struct {
	loom.Engine
	reads, updates int
}

func (c *countingStore) MoveProject(ctx context.Context, m loom.ProjectMove) ([]*loom.Session, error) {
	c.updates++
	return c.Engine.MoveProject(ctx, m)
}

func (c *countingStore) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	c.reads++
	return c.Engine.Sessions(ctx, f)
}

func (c *countingStore) Summaries(ctx context.Context, f loom.SessionFilter) ([]*loom.SessionSummary, error) {
	c.reads++
	return c.Engine.Summaries(ctx, f)
}

func (c *countingStore) UpdateSession(ctx context.Context, id string, u loom.SessionUpdate) (*loom.Session, error) {
	c.updates++
	return c.Engine.UpdateSession(ctx, id, u)
}

// Once a project's sessions have moved, adopting it again is one query;
// a project identified by its path costs none.
func TestAdoptProjectCostsOneQueryWhenDone(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	ctx := context.Background()
	root := gitWorkTree(t, filepath.Join(fx.Home, "src", "api"), "")
	st := &countingStore{Engine: fx.OpenStore(t)}
	for i := range 3 {
		s := &loom.Session{ID: clitest.IDAt(clitest.Base.Add(time.Duration(i) * time.Minute)), UserID: "local", Project: clitest.MustProject(t, root)}
		if err := st.Append(ctx, s, clitest.TextMsg(loom.RoleUser, "hi", clitest.Base)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := clitest.AdoptProject(ctx, st, "local", clitest.MustProject(t, root)); n != 0 || err != nil || st.reads+st.updates != 0 {
		t.Fatalf("a project by path: moved %d, %v, %d reads %d updates", n, err, st.reads, st.updates)
	}
	runGit(t, root, "remote", "add", "origin", "https://github.com/acme/api")
	repo := clitest.MustProject(t, root)
	if n, err := clitest.AdoptProject(ctx, st, "local", repo); n != 3 || err != nil {
		t.Fatalf("first run moved %d: %v", n, err)
	}
	st.reads, st.updates = 0, 0
	if n, err := clitest.AdoptProject(ctx, st, "local", repo); n != 0 || err != nil || st.reads != 1 || st.updates != 0 {
		t.Fatalf("second run: moved %d, %v, %d reads %d updates; want one read", n, err, st.reads, st.updates)
	}
}

// session move DIR re-homes a session to DIR's project by the remote
// rule: it joins the repository's project, keyed after the repository,
// and another clone lists it.
func TestSessionMoveToAClone(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	clone := gitWorkTree(t, filepath.Join(fx.Home, "laptop", "api-checkout"), "ssh://git@github.com/acme/api")
	other := gitWorkTree(t, filepath.Join(fx.Home, "desktop", "api"), "git@github.com:acme/api.git")
	s := clitest.DecodeJSON[*loom.Session](t, fx.MustRun(t, "session", "move", fx.Web.ID, clone, "--json"))
	want := loom.Project{ID: paths.ProjectID("github.com/acme/api"), Name: "api", Root: clone}
	if s.Project != want || s.Key != "cli:api" || s.Cwd != clone {
		t.Fatalf("moved = project %+v key %q cwd %q, want %+v cli:api", s.Project, s.Key, s.Cwd, want)
	}
	r := fx.RunWith(t, clitest.RunOpts{Dir: other}, "session", "list", "--json")
	if list := clitest.DecodeJSON[[]*loom.Session](t, r.Stdout); len(list) != 1 || list[0].ID != fx.Web.ID {
		t.Fatalf("the other clone lists %s", r.Stdout)
	}
}

// An import gives a session whose working directory is a clone with a
// remote the repository's project, and moves what an earlier import
// recorded there under the clone's path, even when run from elsewhere.
func TestImportIntoAClone(t *testing.T) {
	t.Parallel()
	fx := &clitest.AgentFixture{Fixture: clitest.NewEmptyFixture(t)}
	ctx := context.Background()
	clone := gitWorkTree(t, filepath.Join(fx.Home, "src", "api"), "git@github.com:acme/api.git")
	repo := clitest.MustProject(t, clone)
	st := fx.OpenStore(t)
	earlier := &loom.Session{ID: clitest.IDAt(clitest.Base), UserID: "local", Key: "codex:0199", Surface: "codex", Title: "earlier import",
		Project: loom.Project{ID: paths.ProjectID(clone), Name: "api", Root: clone}, Cwd: clone,
		Source: &loom.Source{Tool: "codex", Path: "/elsewhere/rollout.jsonl"}, CreatedAt: clitest.Base, UpdatedAt: clitest.Base}
	msg := clitest.TextMsg(loom.RoleUser, "hi", clitest.Base)
	msg.ID, msg.Seq, msg.Parts[0].ID = "codex-item-1", 1, "codex-part-1"
	if err := st.Import(ctx, []*loom.SessionData{{Session: earlier, Messages: []*loom.Message{msg}}}); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(fx.Home, ".claude", "projects", "-src-api")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const sid = "5f0c3a52-0000-4000-8000-000000000001"
	ts := time.Now().Add(-time.Hour).UTC()
	var b strings.Builder
	for i, m := range []map[string]any{
		{"type": "user", "message": map[string]any{"role": "user", "content": "why is the build red?"}},
		{"type": "assistant", "message": map[string]any{"id": "msg_1", "role": "assistant", "model": "claude-opus-4-6",
			"content": []any{map[string]any{"type": "text", "text": "a missing import"}}}},
	} {
		m["uuid"], m["parentUuid"] = "5f0c3a52-0000-4000-8000-00000000010"+string(rune('0'+i)), nil
		if i > 0 {
			m["parentUuid"] = "5f0c3a52-0000-4000-8000-000000000100"
		}
		m["sessionId"], m["cwd"], m["version"], m["isSidechain"] = sid, filepath.Join(clone, "pkg"), "2.1.50", false
		m["timestamp"] = ts.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)
		line, _ := json.Marshal(m)
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fx.LoomIn(t, fx.Other, "session", "import", "--from", "claude-code")

	list := listJSON(t, fx.LoomIn(t, fx.Other, "session", "list", "--all-projects", "--json"))
	if len(list) != 2 {
		t.Fatalf("imported %v, want the new session and the earlier one", sessionIDs(list))
	}
	for _, s := range list {
		if s.Project != repo {
			t.Errorf("%s (%s): project %+v, want %+v", s.ID, s.Key, s.Project, repo)
		}
	}
}
