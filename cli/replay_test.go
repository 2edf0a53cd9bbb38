package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

func TestReplayTiming(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	var waits []time.Duration
	ios, _, out, _ := term.Test()
	inv := command.NewInvocation(&Factory{IO: ios, Env: func(k string) string { return fx.env()[k] }, Getwd: func() (string, error) { return fx.project, nil },
		OpenStore: openFor, Now: time.Now})
	defer inv.Close()
	opts := &ReplayOptions{IO: inv.IO, ReadSession: inv.ReadSession, Now: inv.TimeNow, Ref: fx.main.ID, Speed: 2, Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	if err := replayRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	// Gaps of one minute between messages, halved, capped at 5 s.
	if len(waits) != 8 {
		t.Fatalf("%d waits for 9 messages: %v", len(waits), waits)
	}
	for _, w := range waits {
		if w != maxReplayWait {
			t.Fatalf("wait %v, want the %v cap", w, maxReplayWait)
		}
	}
	if strings.Count(out.String(), "── #") != 9 {
		t.Fatalf("replay printed %d messages", strings.Count(out.String(), "── #"))
	}
	if got := replayWait(3*time.Second, 2); got != 1500*time.Millisecond {
		t.Fatalf("replayWait(3s, 2) = %v", got)
	}
	if got := replayWait(time.Hour, 0); got != 0 {
		t.Fatalf("speed 0 waits %v", got)
	}
	waits = nil
	opts.Speed = 0
	if err := replayRun(context.Background(), opts); err != nil || len(waits) != 0 {
		t.Fatalf("--speed 0: %v, waits %v", err, waits)
	}
	// Through the command, with no delay.
	if out := fx.mustRun(t, "replay", "Fix the flaky test", "--speed", "0"); !strings.Contains(out, "You're welcome") {
		t.Fatalf("replay:\n%s", out)
	}
}
