package blame_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/gittest"
)

// tokensCommitted is a work tree of two commits: a human's README.md,
// then the agent's tokens.go and the files of more a human wrote.
func tokensCommitted(t *testing.T, more map[string]string) *work {
	w := newWork(t)
	w.write("README.md", "# parser\n")
	w.commit("start")
	w.agentWrites("Write a tokenizer for the parser.", "tokens.go", parser)
	for rel, content := range more {
		w.write(rel, content)
	}
	w.commit("tokens")
	return w
}

// TestBlameFromNotesAlone: a clone that has a repository's git notes
// but no session of it says where its lines came from (a git note, not
// an Agent Trace record), does not ask to import sessions it reads from
// the notes, and its pull request's cost and titles are said to be
// unknown, not $0.00.
func TestBlameFromNotesAlone(t *testing.T) {
	w := tokensCommitted(t, nil)
	w.must("blame", "notes", "--all")

	fx := clitest.NewEmptyFixture(t)
	clone := filepath.Join(fx.Home, "clone")
	gittest.Git(t, fx.Home, time.Time{}, "clone", "-q", w.dir, clone)
	gittest.Git(t, clone, time.Time{}, "fetch", "-q", "origin", "refs/notes/ai:refs/notes/ai")
	run := func(args ...string) clitest.Result {
		return fx.RunWith(t, clitest.RunOpts{Dir: clone}, args...)
	}
	r := run("blame", "tokens.go")
	if r.Code != 0 || !strings.Contains(r.Stdout, w.ses.ID) || strings.Contains(r.Stderr, "import the agents' sessions first") {
		t.Errorf("loom blame in a clone with notes: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = run("blame", "tokens.go:4")
	if r.Code != 0 || !strings.Contains(r.Stdout, "from a git note") || strings.Contains(r.Stdout, "Agent Trace") {
		t.Errorf("loom blame FILE:LINE of a line from a git note: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = run("blame", "pr", "HEAD~1..HEAD", "--markdown")
	if r.Code != 0 || strings.Contains(r.Stdout, "$0.00") || !strings.Contains(r.Stdout, "not known") {
		t.Errorf("loom blame pr --markdown from notes alone: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = run("blame", "pr", "HEAD~1..HEAD")
	if r.Code != 0 || strings.Contains(r.Stdout, "$0.00") || !strings.Contains(r.Stdout, "not known") {
		t.Errorf("loom blame pr from notes alone: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestBlamePRUnreadableFile: a file of the range whose content git
// cannot read is named, and the other files are counted.
func TestBlamePRUnreadableFile(t *testing.T) {
	w := tokensCommitted(t, map[string]string{"broken.txt": "a line git will lose\n"})
	blob := strings.TrimSpace(w.git("rev-parse", "HEAD:broken.txt"))
	if err := os.Remove(filepath.Join(w.dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	r := w.run("blame", "pr", "HEAD~1..HEAD")
	if r.Code != 0 || !strings.Contains(r.Stdout, "6 lines added: 6 by agents") || !strings.Contains(r.Stderr, "broken.txt") {
		t.Errorf("loom blame pr with an unreadable file: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestBlamePRUnpricedModel: a session on a model the price table does
// not know (tokens counted, no cost) is of unknown cost in blame pr, as
// loom usage says it ("—"), never $0.00; a file git cannot read beside
// it is named in loom's one line, with none of git's own.
func TestBlamePRUnpricedModel(t *testing.T) {
	w := newWork(t)
	w.write("README.md", "# parser\n")
	w.commit("start")
	w.agentWrites("Write a tokenizer for the parser.", "tokens.go", parser)
	at := time.Now().Add(-time.Second).UTC()
	if err := w.st.Append(context.Background(), w.ses, &loom.Message{Role: loom.RoleAssistant, Model: "aide-gpt-5", Provider: "openai", CreatedAt: at,
		Usage: loom.Usage{InputTokens: 54, OutputTokens: 212, APICalls: 1}, Parts: []loom.Part{{Type: loom.PartText, Text: "Done."}}}); err != nil {
		t.Fatal(err)
	}
	w.write("broken.txt", "a line git will lose\n")
	w.commit("tokens")
	blob := strings.TrimSpace(w.git("rev-parse", "HEAD:broken.txt"))
	if err := os.Remove(filepath.Join(w.dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"blame", "pr", "HEAD~1..HEAD"}, {"blame", "pr", "HEAD~1..HEAD", "--markdown"}} {
		r := w.run(args...)
		if r.Code != 0 || strings.Contains(r.Stdout, "$0.00") || !strings.Contains(r.Stdout, "—") || !strings.Contains(r.Stdout, "Add the parser") {
			t.Errorf("loom %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
		if strings.Contains(r.Stderr, "fatal:") || !strings.Contains(r.Stderr, "broken.txt could not be blamed") {
			t.Errorf("loom %s: stderr\n%s", strings.Join(args, " "), r.Stderr)
		}
	}
	var pr struct {
		Unpriced int `json:"sessions_unpriced"`
		Sessions []struct {
			Unpriced bool `json:"unpriced"`
		}
	}
	r := w.run("blame", "pr", "HEAD~1..HEAD", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &pr); err != nil || pr.Unpriced != 1 || len(pr.Sessions) != 1 || !pr.Sessions[0].Unpriced {
		t.Errorf("loom blame pr --json: %v\n%s", err, r.Stdout)
	}
}
