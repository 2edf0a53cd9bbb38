package cli

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// A message that a fork and a rewind inherited is one hit of loom
// search, piped, with --json and on a terminal, and of chat's /search:
// in the session it was written in, naming the two others (also_in).
func TestSearchFindsInheritedMessageOnce(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	// fx.fork holds turn 1 of fx.main; the rewind moves turn 3 to a new
	// fork that holds every turn.
	r := fx.exec(t, "", "session", "rewind", fx.main.ID, "--turn", "2")
	if r.code != 0 {
		t.Fatalf("rewind: exit %d: %s", r.code, r.stderr)
	}
	rewound := strings.TrimSpace(r.stdout)
	const query = "Why does TestRetry"

	// Other messages may match too (PostgreSQL drops "does" and "why"
	// as stop words): each message is one hit, and the question is one.
	r = fx.exec(t, "", "search", query, "--json")
	all := decodeJSON[[]loom.SearchHit](t, r.stdout)
	var hits []loom.SearchHit
	seen := map[string]bool{}
	for _, h := range all {
		if seen[h.MessageID] {
			t.Fatalf("search --json: message %s is hit twice:\n%s", h.MessageID, r.stdout)
		}
		seen[h.MessageID] = true
		if strings.Contains(h.Snippet, "flake?") {
			hits = append(hits, h)
		}
	}
	if r.code != 0 || len(hits) != 1 {
		t.Fatalf("search --json: exit %d, %d hits of the question, want one:\n%s%s", r.code, len(hits), r.stdout, r.stderr)
	}
	if h := hits[0]; h.SessionID != fx.main.ID || len(h.AlsoIn) != 2 || !strings.Contains(strings.Join(h.AlsoIn, " "), fx.fork.ID) || !strings.Contains(strings.Join(h.AlsoIn, " "), rewound) {
		t.Fatalf("search --json: the hit is in %s, also in %v; want %s, also in %s and %s", h.SessionID, h.AlsoIn, fx.main.ID, fx.fork.ID, rewound)
	}

	r = fx.exec(t, "", "search", query)
	var rows []string
	for _, row := range lines(r.stdout) {
		if strings.Contains(row, "flake?") {
			rows = append(rows, row)
		}
	}
	if len(rows) != 1 || r.code != 0 || !strings.HasPrefix(rows[0], fx.main.ID+"\t") {
		t.Fatalf("search piped: exit %d, want one row in %s:\n%s%s", r.code, fx.main.ID, r.stdout, r.stderr)
	}

	p := fx.startPTYSize(t, 100, 40, "search", query)
	if code := p.Wait(t); code != 0 {
		t.Fatalf("search on a terminal: exit %d:\n%s", code, p.Output())
	}
	if out := p.Output(); strings.Count(out, "flake?") != 1 || !strings.Contains(out, "also in 2 other sessions") {
		t.Fatalf("search on a terminal: want the message once, also in 2 other sessions:\n%s", out)
	}

	forTermSizes(t, func(t *testing.T, cols, rows int) {
		srv := openaitest.NewServer()
		t.Cleanup(srv.Close)
		cmd := exec.Command(loomBinary(t), "chat", "--new")
		cmd.Dir, cmd.Env = fx.project, fx.binEnv(append(providerEnv(srv), "TERM=xterm-256color")...)
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
