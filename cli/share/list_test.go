package share

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// The commands fill their options from their flags and arguments, and
// revoke wants ids or --all, not both.
func TestNewCmdListAndRevokeOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdList, "--json", "--user", "bob"); !got.JSON || got.User != "bob" || got.Dirs == nil || got.Now == nil {
		t.Errorf("list options: %+v", got)
	}
	cmdtest.Rejects(t, newCmdList, "Xb3kq2")

	if got := cmdtest.Options(t, newCmdRevoke, "Xb3kq2", "Yc4lr3", "--hub", "https://hub.example.com"); strings.Join(got.IDs, ",") != "Xb3kq2,Yc4lr3" || got.All || got.Hub != "https://hub.example.com" {
		t.Errorf("revoke options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdRevoke, "--all", "--token", "T"); !got.All || len(got.IDs) != 0 || got.Token != "T" {
		t.Errorf("revoke --all options: %+v", got)
	}
	if err := cmdtest.Rejects(t, newCmdRevoke); !strings.Contains(err.Error(), "which share?") {
		t.Errorf("revoke without ids: %v", err)
	}
	if err := cmdtest.Rejects(t, newCmdRevoke, "--all", "Xb3kq2"); !strings.Contains(err.Error(), "not both") {
		t.Errorf("revoke --all ID: %v", err)
	}
}

// linkID is the share id in link.
func linkID(link string) string {
	page, _, _ := strings.Cut(link, "#")
	return page[strings.LastIndex(page, "/")+1:]
}

// Revoke ends a link by a prefix of its id on the hub, and list shows
// the links made here, newest first, with their state.
func TestRevokeAndListRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	first := w.share(t, nil)
	second := w.share(t, func(o *Options) { o.Turns = "2" })
	firstID, secondID := linkID(first), linkID(second)

	e, ios := w.env()
	if err := revokeRun(t.Context(), &RevokeOptions{Env: e, IDs: []string{firstID[:6]}}); err != nil {
		t.Fatal(err)
	}
	if want := "Revoked 1 share: " + firstID + ". Their links answer 404 and the hub has deleted them.\n"; text(ios.ErrOut) != want {
		t.Errorf("revoke: %q, want %q", text(ios.ErrOut), want)
	}
	if _, err := w.hub.ShareBlob(t.Context(), firstID); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("the hub still serves the revoked share: %v", err)
	}

	e, ios = w.env()
	if err := listRun(&ListOptions{Env: e}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(text(ios.Out), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("list: %q, want a line per link", lines)
	}
	if f := strings.Split(lines[0], "\t"); len(f) != 5 || f[0] != secondID || f[1] != "flaky deploy (turns 2)" || f[2] != "live" || f[4] != second {
		t.Errorf("newest first, live: %q", f)
	}
	if f := strings.Split(lines[1], "\t"); len(f) != 5 || f[0] != firstID || f[2] != "revoked" || f[4] != first {
		t.Errorf("then the revoked one: %q", f)
	}

	// --all revokes what is still live on the hub.
	e, ios = w.env()
	e.JSON = true
	if err := revokeRun(t.Context(), &RevokeOptions{Env: e, All: true}); err != nil {
		t.Fatal(err)
	}
	var got revoked
	if err := json.Unmarshal([]byte(text(ios.Out)), &got); err != nil || len(got.Revoked) != 1 || got.Revoked[0] != secondID {
		t.Errorf("revoke --all --json: %s (%v), want [%s]", text(ios.Out), err, secondID)
	}
	e, ios = w.env()
	e.JSON = true
	if err := listRun(&ListOptions{Env: e}); err != nil {
		t.Fatal(err)
	}
	var listedJSON []listed
	if err := json.Unmarshal([]byte(text(ios.Out)), &listedJSON); err != nil || len(listedJSON) != 2 || listedJSON[0].State != "revoked" || listedJSON[1].State != "revoked" {
		t.Errorf("list --json after revoke --all: %s (%v)", text(ios.Out), err)
	}

	e, ios = w.env()
	if err := revokeRun(t.Context(), &RevokeOptions{Env: e, All: true}); err != nil || text(ios.ErrOut) != "No live shares to revoke.\n" {
		t.Errorf("revoke --all with none live: %v, %q", err, text(ios.ErrOut))
	}
	if err := revokeRun(t.Context(), &RevokeOptions{Env: e, IDs: []string{"nope"}}); loom.ErrorCode(err) != loom.ENOTFOUND {
		t.Errorf("revoke of a share not made here: %v", err)
	}
}

// list says nothing on stdout when no link was made here, and [] with
// --json.
func TestListRunWithoutLinks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, asJSON := range []bool{false, true} {
		e, ios := w.env()
		e.JSON = asJSON
		if err := listRun(&ListOptions{Env: e}); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{false: "", true: "[]\n"}[asJSON]; text(ios.Out) != want || text(ios.ErrOut) != "" {
			t.Errorf("--json %v: stdout %q, stderr %q, want %q", asJSON, text(ios.Out), text(ios.ErrOut), want)
		}
	}
}
