package search_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// A message that a fork and a rewind inherited is one hit of loom
// search, piped, with --json and on a terminal, and of chat's /search:
// in the session it was written in, naming the two others (also_in).
func TestSearchFindsInheritedMessageOnce(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	// fx.fork holds turn 1 of fx.main; the rewind moves turn 3 to a new
	// fork that holds every turn.
	r := fx.Exec(t, "", "session", "rewind", fx.Main.ID, "--turn", "2")
	if r.Code != 0 {
		t.Fatalf("rewind: exit %d: %s", r.Code, r.Stderr)
	}
	rewound := strings.TrimSpace(r.Stdout)
	const query = "Why does TestRetry"

	// Other messages may match too (PostgreSQL drops "does" and "why"
	// as stop words): each message is one hit, and the question is one.
	r = fx.Exec(t, "", "search", query, "--json")
	all := clitest.DecodeJSON[[]loom.SearchHit](t, r.Stdout)
	var hits []loom.SearchHit
	seen := map[string]bool{}
	for _, h := range all {
		if seen[h.MessageID] {
			t.Fatalf("search --json: message %s is hit twice:\n%s", h.MessageID, r.Stdout)
		}
		seen[h.MessageID] = true
		if strings.Contains(h.Snippet, "flake?") {
			hits = append(hits, h)
		}
	}
	if r.Code != 0 || len(hits) != 1 {
		t.Fatalf("search --json: exit %d, %d hits of the question, want one:\n%s%s", r.Code, len(hits), r.Stdout, r.Stderr)
	}
	if h := hits[0]; h.SessionID != fx.Main.ID || len(h.AlsoIn) != 2 || !strings.Contains(strings.Join(h.AlsoIn, " "), fx.Fork.ID) || !strings.Contains(strings.Join(h.AlsoIn, " "), rewound) {
		t.Fatalf("search --json: the hit is in %s, also in %v; want %s, also in %s and %s", h.SessionID, h.AlsoIn, fx.Main.ID, fx.Fork.ID, rewound)
	}

	r = fx.Exec(t, "", "search", query)
	var rows []string
	for _, row := range clitest.Lines(r.Stdout) {
		if strings.Contains(row, "flake?") {
			rows = append(rows, row)
		}
	}
	if len(rows) != 1 || r.Code != 0 || !strings.HasPrefix(rows[0], fx.Main.ID+"\t") {
		t.Fatalf("search piped: exit %d, want one row in %s:\n%s%s", r.Code, fx.Main.ID, r.Stdout, r.Stderr)
	}

	p := fx.StartPTYSize(t, 100, 40, "search", query)
	if code := p.Wait(t); code != 0 {
		t.Fatalf("search on a terminal: exit %d:\n%s", code, p.Output())
	}
	if out := p.Output(); strings.Count(out, "flake?") != 1 || !strings.Contains(out, "also in 2 other sessions") {
		t.Fatalf("search on a terminal: want the message once, also in 2 other sessions:\n%s", out)
	}

	clitest.ForTermSizes(t, func(t *testing.T, cols, rows int) {
		srv := openaitest.NewServer()
		t.Cleanup(srv.Close)
		cmd := exec.Command(clitest.LoomBinary(t), "chat", "--new")
		cmd.Dir, cmd.Env = fx.Project, fx.BinEnv(append(clitest.ProviderEnv(srv), "TERM=xterm-256color")...)
		p := termtest.Start(t, cmd, cols, rows)
		p.WaitPrompt(t, "›")
		p.Send("/search " + query + "\r")
		p.WaitFor(t, "flake?")
		p.WaitPrompt(t, "›")
		if s := p.Screen(); strings.Count(s, "flake?") != 1 || !strings.Contains(s, "also in 2 other sessions") {
			t.Fatalf("/search: want the message once, also in 2 other sessions:\n%s", p.Screen())
		}
		p.Leave(t, "›")
	})
}
