package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/clitest"
)

func TestReplayTiming(t *testing.T) {
	t.Parallel()
	fx := clitest.NewFixture(t)
	var waits []time.Duration
	ios, _, out, _ := term.Test()
	inv := command.NewInvocation(&cli.Factory{IO: ios, Env: func(k string) string { return fx.Env()[k] }, Getwd: func() (string, error) { return fx.Project, nil },
		OpenStore: clitest.OpenFor, Now: time.Now})
	defer inv.Close()
	opts := &cli.ReplayOptions{IO: inv.IO, ReadSession: inv.ReadSession, Now: inv.TimeNow, Ref: fx.Main.ID, Speed: 2, Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	if err := cli.ReplayRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	// Gaps of one minute between messages, halved, capped at 5 s.
	if len(waits) != 8 {
		t.Fatalf("%d waits for 9 messages: %v", len(waits), waits)
	}
	for _, w := range waits {
		if w != cli.MaxReplayWait {
			t.Fatalf("wait %v, want the %v cap", w, cli.MaxReplayWait)
		}
	}
	if strings.Count(out.String(), "── #") != 9 {
		t.Fatalf("replay printed %d messages", strings.Count(out.String(), "── #"))
	}
	if got := cli.ReplayWait(3*time.Second, 2); got != 1500*time.Millisecond {
		t.Fatalf("replayWait(3s, 2) = %v", got)
	}
	if got := cli.ReplayWait(time.Hour, 0); got != 0 {
		t.Fatalf("speed 0 waits %v", got)
	}
	waits = nil
	opts.Speed = 0
	if err := cli.ReplayRun(context.Background(), opts); err != nil || len(waits) != 0 {
		t.Fatalf("--speed 0: %v, waits %v", err, waits)
	}
	// Through the command, with no delay.
	if out := fx.MustRun(t, "replay", "Fix the flaky test", "--speed", "0"); !strings.Contains(out, "You're welcome") {
		t.Fatalf("replay:\n%s", out)
	}
}
