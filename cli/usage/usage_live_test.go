package usage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// loom usage blocks --live draws the active block and, piped, prints a
// line per redraw; it says when no block is active, and refuses what it
// cannot follow.
func TestUsageBlocksLive(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	now := clitest.Base.Add(2 * time.Hour) // the fixture's Factory.Now
	reply := func(at time.Time, out int64) *loom.Message {
		return &loom.Message{Role: loom.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5", CreatedAt: at,
			Usage: loom.Usage{InputTokens: 1000, OutputTokens: out}, Parts: []loom.Part{{Type: loom.PartText, Text: "ok"}}}
	}
	if err := st.Append(context.Background(), &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:live", Surface: "cli", Project: fx.Proj},
		reply(now.Add(-90*time.Minute), 500), reply(now.Add(-30*time.Minute), 1500)); err != nil {
		t.Fatal(err)
	}

	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "usage", "blocks", "--live", "--tz", "UTC", "--frames", "2", "--interval", "100ms")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if n := strings.Count(r.Stdout, "\x1b[2J"); n != 2 {
		t.Errorf("%d redraws, want 2", n)
	}
	for _, want := range []string{"Active 5-hour block", "2025-05-01 10:00–15:00", "(3h00m left", "4,000 tokens", "$0.04", "16,000 tokens", "claude-sonnet-4-5"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("the live block lacks %q:\n%s", want, r.Stdout)
		}
	}

	out := fx.MustRun(t, "usage", "blocks", "--live", "--tz", "UTC", "--frames", "1", "--interval", "100ms")
	f := strings.Split(strings.TrimSpace(out), "\t")
	if len(f) != 11 || f[1] != "active" || f[2] != "2025-05-01T10:00:00Z" || f[4] != "4000" || f[5] != "0.036" || f[10] != "180" {
		t.Errorf("piped, the live line is %q", out)
	}

	r = fx.RunWith(t, clitest.RunOpts{Tty: true, Before: func(f *cli.Factory) { f.Now = func() time.Time { return now.Add(6 * time.Hour) } }},
		"usage", "blocks", "--live", "--tz", "UTC", "--frames", "1")
	if r.Code != 0 || !strings.Contains(r.Stdout, "No active 5-hour block") || !strings.Contains(r.Stdout, "The last block was 2025-05-01 10:00–15:00: 4,000 tokens") {
		t.Errorf("without an active block: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	for _, args := range [][]string{{"--json"}, {"--csv"}, {"--until", "2025-05-02"}, {"--interval", "1ms"}} {
		if r := fx.Run(t, append([]string{"usage", "blocks", "--live", "--frames", "1"}, args...)...); r.Code != 2 {
			t.Errorf("--live %v: exit %d, want 2 (%s)", args, r.Code, r.Stderr)
		}
	}
}
