package search_test

import (
	"context"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sessionstore"
)

// A search that runs out of time shows the hits it found before, marked
// partial: "partial": true on each hit with --json, one line on stderr
// saying so as text; never other messages in their place (the newest
// that hold some word, as it once did), and never the refusal that its
// words are in too many messages.
func TestSearchOutOfTimeIsPartial(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	slow := clitest.RunOpts{Before: func(f *cli.Factory) {
		open := f.OpenStore
		f.OpenStore = func(ctx context.Context, url string, access cli.Access, opts ...sessionstore.Option) (loom.Engine, error) {
			st, err := open(ctx, url, access, opts...)
			if err != nil {
				return nil, err
			}
			return storetest.SlowTiers{Engine: st}, nil
		}
	}}
	// In time, the every-word hits of "TestRetry flake" come first, then
	// the tiers'.
	inTime := clitest.DecodeJSON[[]map[string]any](t, fx.MustExec(t, "search", "TestRetry flake", "--json"))
	every := map[string]bool{}
	for _, h := range inTime {
		if h["tier"] == nil {
			every[h["message_id"].(string)] = true
		}
	}
	if len(every) == 0 || len(every) == len(inTime) {
		t.Fatalf("the fixture's search in time: want every-word hits and others:\n%v", inTime)
	}
	r := fx.RunWith(t, slow, "search", "TestRetry flake", "--json")
	if r.Code != 0 || strings.Contains(r.Stderr, "too many") {
		t.Fatalf("search --json out of time: exit %d\n%s", r.Code, r.Stderr)
	}
	hits := clitest.DecodeJSON[[]map[string]any](t, r.Stdout)
	if len(hits) != len(every) {
		t.Fatalf("search --json out of time = %d hits, want the %d every-word hits found in time:\n%s", len(hits), len(every), r.Stdout)
	}
	for _, h := range hits {
		if h["partial"] != true || !every[h["message_id"].(string)] || h["tier"] != nil {
			t.Fatalf("a hit of a search out of time is not one found in time, marked partial:\n%s", r.Stdout)
		}
	}
	if strings.Count(r.Stdout, `"partial": true`) != len(hits) {
		t.Fatalf(`want "partial": true once per hit:\n%s`, r.Stdout)
	}

	r = fx.RunWith(t, slow, "search", "TestRetry flake")
	if r.Code != 0 || !strings.Contains(r.Stdout, "TestRetry") {
		t.Fatalf("search out of time: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	if got := clitest.Lines(r.Stderr); len(got) != 1 || got[0] != command.PartialNote {
		t.Fatalf("search out of time: want one line on stderr saying the hits are partial, got:\n%s", r.Stderr)
	}
	if strings.Contains(r.Stdout, "partial") {
		t.Fatalf("the partial note is in the hits:\n%s", r.Stdout)
	}

	// The same search in time is not marked.
	r = fx.Run(t, "search", "TestRetry flake", "--json")
	if r.Code != 0 || strings.Contains(r.Stdout, "partial") || r.Stderr != "" {
		t.Fatalf("search in time: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
}
