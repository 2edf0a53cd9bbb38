package command_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

var hitsNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func sampleHits() []loom.SearchHit {
	return []loom.SearchHit{
		{SessionID: "0196a3b2-aaaa-7000-8000-000000000001", Seq: 3, Role: loom.RoleUser, Snippet: "the **deploy** failed",
			CreatedAt: hitsNow.Add(-2 * time.Hour), SessionTitle: "Fix the deploy", AlsoIn: []string{"x", "y"}},
		{SessionID: "0196a3b2-bbbb-7000-8000-000000000002", Seq: 7, Role: loom.RoleAssistant, Snippet: "deploying now",
			CreatedAt: hitsNow.Add(-3 * 24 * time.Hour), SessionKey: "cli:api", Tier: loom.TierWordForms},
	}
}

// Piped, each hit is a tab-separated line with the whole session id.
func TestWriteHitsPiped(t *testing.T) {
	ios, _, out, _ := term.Test()
	if err := command.WriteHits(ios, sampleHits(), hitsNow, 8); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("wrote %q", out)
	}
	want := []string{"0196a3b2-aaaa-7000-8000-000000000001", "3", "user", loom.FormatTime(hitsNow.Add(-2 * time.Hour)), "Fix the deploy", "the **deploy** failed"}
	if got := strings.Split(lines[0], "\t"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("first line = %q, want the fields %q", lines[0], want)
	}
}

// On a terminal, a hit is its short id, its session's title (else key),
// where and when, and how it matched, with the snippet under it.
func TestWriteHitsTerminal(t *testing.T) {
	ios, _, out, _ := term.Test()
	ios.SetStdoutTTY(true)
	ios.SetColorEnabled(false)
	ios.SetWidth(80)
	if err := command.WriteHits(ios, sampleHits(), hitsNow, 8); err != nil {
		t.Fatal(err)
	}
	want := "0196a3b2  Fix the deploy  #3 user · 2h ago · also in 2 other sessions\n" +
		"    the **deploy** failed\n" +
		"0196a3b2  cli:api  #7 assistant · 3d ago · word forms\n" +
		"    deploying now\n"
	if out.String() != want {
		t.Fatalf("wrote\n%s\nwant\n%s", out, want)
	}
}

// A long snippet wraps under its start; a control sequence in stored
// text never reaches the terminal raw.
func TestWriteHitsWrapsAndSanitizes(t *testing.T) {
	ios, _, out, _ := term.Test()
	ios.SetStdoutTTY(true)
	ios.SetColorEnabled(false)
	ios.SetWidth(40)
	hit := loom.SearchHit{SessionID: "0196a3b2-aaaa-7000-8000-000000000001", Seq: 1, Role: loom.RoleUser, CreatedAt: hitsNow,
		SessionTitle: "evil\x1b]0;pwned\x07 title", Snippet: strings.Repeat("word ", 20)}
	if err := command.WriteHits(ios, []loom.SearchHit{hit}, hitsNow, 8); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(out.String(), '\x1b') || strings.ContainsRune(out.String(), '\x07') {
		t.Fatalf("a control sequence reached the terminal: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("the snippet did not wrap: %q", out)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "    word") || len(l) > 40 {
			t.Fatalf("snippet line %q: not under the snippet's start, or wider than the terminal", l)
		}
	}
}

// A search that found nothing in its project says whether another
// project has matches.
func TestMatchesElsewhere(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	addSession(t, st, &loom.Session{Project: webProject}, "the flaky websocket test")
	q := loom.SearchQuery{Text: "websocket", UserID: "local", ProjectID: apiProject.ID}
	if found, err := command.MatchesElsewhere(ctx, st, q); err != nil || !found {
		t.Fatalf("a match in another project: %v, %v", found, err)
	}
	q.Text = "kubernetes"
	if found, err := command.MatchesElsewhere(ctx, st, q); err != nil || found {
		t.Fatalf("no match anywhere: %v, %v", found, err)
	}
	q.Text, q.ProjectID = "websocket", ""
	if found, err := command.MatchesElsewhere(ctx, st, q); err != nil || found {
		t.Fatalf("a search of every project has nowhere else: %v, %v", found, err)
	}
}

func TestHitSessions(t *testing.T) {
	if got := command.HitSessions(sampleHits()); len(got) != 2 || got[1] != "0196a3b2-bbbb-7000-8000-000000000002" {
		t.Fatalf("HitSessions = %v", got)
	}
}
