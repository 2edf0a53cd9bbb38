package command_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

var (
	apiProject = loom.Project{ID: "aaaaaaaaaaaaaaaa", Name: "api", Root: "/src/api"}
	webProject = loom.Project{ID: "bbbbbbbbbbbbbbbb", Name: "web", Root: "/src/web"}
)

func scopeIn(ios *term.IOStreams, user string, p loom.Project, perr error) command.Scope {
	return command.Scope{IO: ios, User: func() string { return user }, Project: func() (loom.Project, error) { return p, perr }}
}

// A command's project: the working directory's, none with -a or where
// no project can be found.
func TestScopeProject(t *testing.T) {
	ios, _, _, _ := term.Test()
	if p := scopeIn(ios, "local", apiProject, nil).ScopeProject(false); p == nil || *p != apiProject {
		t.Fatalf("ScopeProject = %v, want %+v", p, apiProject)
	}
	if p := scopeIn(ios, "local", apiProject, nil).ScopeProject(true); p != nil {
		t.Fatalf("with -a: %+v", p)
	}
	if p := scopeIn(ios, "local", loom.Project{}, errors.New("working directory is gone")).ScopeProject(false); p != nil {
		t.Fatalf("without a project: %+v", p)
	}
}

// A reference finds this user's session, the key this project's; a
// session in the trash is named as such, with how to restore it; a word
// of a title names the sessions that hold it.
func TestScopeResolve(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	ios, _, _, _ := term.Test()
	api := addSession(t, st, &loom.Session{Key: "cli:shared", Title: "Fix the deploy script", Project: apiProject}, "deploy is broken")
	web := addSession(t, st, &loom.Session{Key: "cli:shared", Title: "Web work", Project: webProject}, "css")
	bob := addSession(t, st, &loom.Session{UserID: "bob", Key: "cli:bob", Title: "bob's", Project: apiProject}, "hi")
	gone := addSession(t, st, &loom.Session{Title: "old idea", Project: apiProject}, "an old idea")
	if _, err := st.Delete(ctx, gone.ID, loom.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	inAPI, inWeb := scopeIn(ios, "local", apiProject, nil), scopeIn(ios, "local", webProject, nil)
	for _, tc := range []struct {
		sc   command.Scope
		ref  string
		want string
	}{
		{inAPI, "cli:shared", api.ID},
		{inWeb, "cli:shared", web.ID},
		{inWeb, api.ID, api.ID},
		{inWeb, api.ID[:13], api.ID},
		{inAPI, "fix the DEPLOY script", api.ID},
		// Outside any project: ids and titles still resolve.
		{scopeIn(ios, "local", loom.Project{}, errors.New("no project")), "web work", web.ID},
	} {
		got, err := tc.sc.Resolve(ctx, st, tc.ref)
		if err != nil || got.ID != tc.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", tc.ref, got, err, tc.want)
		}
	}

	_, err := inAPI.Resolve(ctx, st, bob.ID)
	if loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("another user's session: %v", err)
	}

	_, err = inAPI.Resolve(ctx, st, gone.ID)
	want := `session "old idea" is in the trash since `
	if loom.ErrorCode(err) != loom.ENOTFOUND || !strings.HasPrefix(loom.ErrorMessage(err), want) ||
		!strings.HasSuffix(loom.ErrorMessage(err), "; loom session restore "+gone.ID+" brings it back") {
		t.Errorf("a trashed session: %v", err)
	}
	if got, err := inAPI.ResolveIn(ctx, st, gone.ID, true); err != nil || got.ID != gone.ID {
		t.Errorf("ResolveIn the trash: %v, %v", got, err)
	}

	_, err = inAPI.Resolve(ctx, st, "deploy")
	want = `no session matches "deploy"; sessions that mention it: "Fix the deploy script" (` + api.ID + `) (give an id, or the whole title)`
	if loom.ErrorCode(err) != loom.ENOTFOUND || loom.ErrorMessage(err) != want {
		t.Errorf("a word of a title:\n got %v\nwant %s", err, want)
	}
	// Too short to suggest from, or matching nothing: no suggestions.
	for _, ref := range []string{"de", "kubernetes"} {
		_, err = inAPI.Resolve(ctx, st, ref)
		if loom.ErrorCode(err) != loom.ENOTFOUND || strings.Contains(err.Error(), "mention") {
			t.Errorf("Resolve(%q): %v", ref, err)
		}
	}
}

// On a terminal an id is shown as a prefix that resolves back to it;
// piped, whole.
func TestScopeDisplayID(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var ids []string
	for range 3 {
		ids = append(ids, addSession(t, st, &loom.Session{Project: apiProject}, "hi").ID)
	}
	ios, _, _, _ := term.Test()
	sc := scopeIn(ios, "local", apiProject, nil)
	if got := sc.DisplayID(ctx, st, ids[0]); got != ids[0] {
		t.Fatalf("piped: %q, want the whole id", got)
	}
	ios.SetStdoutTTY(true)
	n := sc.RefLen(ctx, st, ids)
	if n < loom.ShortIDLen || n >= len(ids[0]) {
		t.Fatalf("RefLen = %d", n)
	}
	for _, id := range ids {
		shown := sc.DisplayID(ctx, st, id)
		if !strings.HasPrefix(id, shown) || len(shown) >= len(id) {
			t.Fatalf("DisplayID(%s) = %q", id, shown)
		}
		if got, err := sc.Resolve(ctx, st, shown); err != nil || got.ID != id {
			t.Fatalf("the shown %q resolves to %v, %v; want %s", shown, got, err, id)
		}
		if len(id[:n]) < len(shown) {
			t.Fatalf("DisplayID(%s) = %q is longer than RefLen of all of them (%d)", id, shown, n)
		}
	}
}
