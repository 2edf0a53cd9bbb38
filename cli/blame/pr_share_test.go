package blame_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/share"
)

// loom blame pr --share end to end, through a real loom serve: off a
// terminal nothing is published without --yes (and the hub holds no
// share); with it, each session behind the lines gets a sealed link,
// in the text, --markdown and --json alike, that opens with its key to
// the session with its secret redacted; loom share list knows the
// links, and the hub's store holds none of the session's text.
func TestBlamePRShare(t *testing.T) {
	hubDB := ""
	if clitest.OnPostgres() {
		hubDB = clitest.FreshSchema(t)
	}
	srv, hubHome, _ := clitest.StartHub(t, hubDB)
	tok := exec.Command(clitest.LoomBinary(t), "token", "create", "--user", "local", "--scope", "share")
	tok.Env = []string{"LOOM_HOME=" + hubHome, "HOME=" + hubHome, "PATH=" + os.Getenv("PATH")}
	if hubDB != "" {
		tok.Env = append(tok.Env, "LOOM_DB="+hubDB)
	}
	shareTok := strings.TrimSpace(clitest.ExecCmd(t, tok, "").Stdout)
	if !strings.HasPrefix(shareTok, loom.TokenPrefix) {
		t.Fatalf("token create --scope share printed %q", shareTok)
	}

	w := newWork(t)
	w.write("README.md", "# parser\n")
	w.commit("start")
	// The session holds a secret before the turn that writes the file.
	sec := secretstest.New(3).Secret("github-token")
	if err := w.st.Append(context.Background(), w.ses, &loom.Message{Role: loom.RoleUser, CreatedAt: clitest.Base,
		Parts: []loom.Part{{Type: loom.PartText, Text: "wombat: the token is " + sec.Text}}}); err != nil {
		t.Fatal(err)
	}
	w.agentWrites("Write a tokenizer for the parser.", "tokens.go", "package parser\n\n// Tokens splits a line.\nfunc Tokens(s string) []string {\n\treturn strings.Fields(s)\n}\n")
	w.commit("tokens")
	env := map[string]string{"LOOM_SHARE_HUB": srv.Base, "LOOM_SHARE_TOKEN": shareTok}
	run := func(args ...string) clitest.Result {
		// The hub takes expiries after its own clock.
		return w.fx.RunWith(t, clitest.RunOpts{Dir: w.dir, Env: env, Before: func(f *cli.Factory) { f.Now = time.Now }}, args...)
	}
	hc := &share.Client{URL: srv.Base, Token: shareTok}

	r := run("blame", "pr", "HEAD~1..HEAD", "--share")
	if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, "--yes") || !strings.Contains(r.Stderr, "Sharing 1 session") ||
		!strings.Contains(r.Stderr, "redacted 1 secret") || !strings.Contains(r.Stderr, "nothing was sent") {
		t.Fatalf("blame pr --share without --yes off a terminal: exit %d\n%s", r.Code, r.Stderr)
	}
	if list, err := hc.Shares(context.Background()); err != nil || len(list) != 0 {
		t.Fatalf("the hub holds %d shares after the refusal (%v)", len(list), err)
	}

	r = run("blame", "pr", "HEAD~1..HEAD", "--share", "--yes", "--json")
	var pr blame.PR
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &pr) != nil {
		t.Fatalf("blame pr --share --json: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if len(pr.Sessions) != 1 || pr.Sessions[0].SessionID != w.ses.ID || pr.Lines.Agent != 6 {
		t.Fatalf("blame pr --share --json: %+v", pr)
	}
	link := pr.Sessions[0].Share
	_, _, text := clitest.OpenShare(t, srv.Base, link)
	if !strings.Contains(text, "Write a tokenizer for the parser.") || !strings.Contains(text, "[REDACTED:github-token]") {
		t.Errorf("the shared session lacks its text or its marker:\n%s", text)
	}
	if v := secretstest.HoldsAny(text, []string{sec.Value}); v != "" {
		t.Errorf("the shared session holds the secret %q", v)
	}
	if hubDB == "" {
		clitest.HubHoldsNo(t, hubHome, "", "wombat", "Write a tokenizer")
	}

	md := run("blame", "pr", "HEAD~1..HEAD", "--share", "--yes", "--markdown")
	if md.Code != 0 || !strings.Contains(md.Stdout, "| ["+w.ses.ID+" Add the parser]("+srv.Base+share.PagePath) {
		t.Errorf("blame pr --share --markdown: exit %d\n%s%s", md.Code, md.Stdout, md.Stderr)
	}
	txt := run("blame", "pr", "HEAD~1..HEAD", "--share", "--yes")
	if txt.Code != 0 || !strings.Contains(txt.Stdout, "\n    "+srv.Base+share.PagePath) {
		t.Errorf("blame pr --share: exit %d\n%s%s", txt.Code, txt.Stdout, txt.Stderr)
	}
	list := clitest.DecodeJSON[[]map[string]any](t, run("share", "list", "--json").Stdout)
	if len(list) != 3 || !slices.ContainsFunc(list, func(m map[string]any) bool { return m["link"] == link && m["session_id"] == w.ses.ID }) {
		t.Errorf("share list after three pr --share: %v", list)
	}

	// A session known from the repository's git notes alone (written,
	// then the session purged from the store) gets no link, and the
	// report says why; nothing is published.
	if r := run("blame", "notes", "--all"); r.Code != 0 {
		t.Fatalf("blame notes --all: exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := w.st.Delete(context.Background(), w.ses.ID, loom.DeleteOptions{Purge: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	r = run("blame", "pr", "HEAD~1..HEAD", "--share", "--json")
	pr = blame.PR{}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &pr) != nil || len(pr.Sessions) != 1 || pr.Sessions[0].Share != "" ||
		!strings.Contains(r.Stderr, "is not in this store") {
		t.Errorf("blame pr --share of a session known from notes alone: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if list, err := hc.Shares(context.Background()); err != nil || len(list) != 3 {
		t.Errorf("the hub holds %d shares, want the 3 made before (%v)", len(list), err)
	}
}
