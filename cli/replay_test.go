package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/sqlite"
)

// replayBase is when the replayed session starts.
var replayBase = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

// flakySession adds to st the session "flaky test" of two turns: its
// reply half a minute after the prompt, with reasoning; the next prompt
// 2 s later, answered at once.
func flakySession(t *testing.T, st *sqlite.Store) *loom.Session {
	t.Helper()
	msg := func(role string, at time.Duration, parts ...loom.Part) *loom.Message {
		return &loom.Message{Role: role, CreatedAt: replayBase.Add(at), Parts: parts}
	}
	text := func(s string) loom.Part { return loom.Part{Type: loom.PartText, Text: s} }
	s := &loom.Session{ID: loom.NewID(), UserID: "local", Title: "flaky test", Project: paths.ProjectOf(t.TempDir())}
	if err := st.Append(t.Context(), s,
		msg(loom.RoleUser, 0, text("why does TestRetry flake")),
		msg(loom.RoleAssistant, 30*time.Second, loom.Part{Type: loom.PartReasoning, Text: "the pool is shared"}, text("The pool times out.")),
		msg(loom.RoleUser, 32*time.Second, text("fix it")),
		msg(loom.RoleAssistant, 32*time.Second, text("Fixed.")),
	); err != nil {
		t.Fatal(err)
	}
	stored, err := st.Session(t.Context(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// Replay prints the session's header and its messages in order,
// reasoning only when asked, pausing between them as long as the
// conversation did divided by the speed, at most 5 s; speed 0 does not
// pause, an interrupted pause ends the replay, and the store is left as
// it was.
func TestReplayRun(t *testing.T) {
	t.Parallel()
	st := cmdtest.Store(t)
	s := flakySession(t, st)
	var waits []time.Duration
	options := func(ref string) *ReplayOptions {
		waits = nil
		ios, _, _, _ := term.Test()
		return &ReplayOptions{IO: ios, Now: func() time.Time { return replayBase.Add(time.Hour) }, Ref: ref, Speed: 2,
			ReadSession: func(ctx context.Context, ref string) (loom.Engine, *loom.Session, error) {
				s, err := st.Session(ctx, ref)
				return st, s, err
			},
			Sleep: func(_ context.Context, d time.Duration) error {
				waits = append(waits, d)
				return nil
			}}
	}

	opts := options(s.ID)
	if err := replayRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := cmdtest.Outputs(opts.IO)
	if !strings.HasPrefix(out, "flaky test\nid:       "+s.ID+"\n") || strings.Count(out, "── #") != 4 {
		t.Errorf("replay printed:\n%s", out)
	}
	order := []string{"── #1 user", "why does TestRetry flake", "── #2 assistant", "The pool times out.", "── #3 user", "fix it", "── #4 assistant", "Fixed."}
	for i, rest := 0, out; i < len(order); i++ {
		at := strings.Index(rest, order[i])
		if at < 0 {
			t.Fatalf("replay printed %q out of order, or not:\n%s", order[i], out)
		}
		rest = rest[at:]
	}
	if strings.Contains(out, "the pool is shared") {
		t.Errorf("replay printed the reasoning without --show-thinking:\n%s", out)
	}
	if want := []time.Duration{maxReplayWait, time.Second}; !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}

	opts = options(s.ID)
	opts.Speed, opts.ShowThinking = 0, true
	if err := replayRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out, _ := cmdtest.Outputs(opts.IO); len(waits) != 0 || !strings.Contains(out, "the pool is shared") {
		t.Errorf("--speed 0 --show-thinking: waits %v, printed:\n%s", waits, out)
	}

	opts = options(s.ID)
	opts.Sleep = func(context.Context, time.Duration) error { return context.Canceled }
	if err := replayRun(t.Context(), opts); err != context.Canceled {
		t.Errorf("an interrupted pause: %v, want the replay to end with it", err)
	}
	if out, _ := cmdtest.Outputs(opts.IO); strings.Count(out, "── #") != 1 {
		t.Errorf("after an interrupted pause the replay went on:\n%s", out)
	}

	after, err := st.Session(t.Context(), s.ID)
	if err != nil || after.MessageCount != 4 || !after.UpdatedAt.Equal(s.UpdatedAt) {
		t.Errorf("replay changed the session: %+v (%v)", after, err)
	}
}

// The command fills its options from REF and its flags: twice as fast
// by default; a negative speed is refused.
func TestNewCmdReplayOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdReplay, "flaky test")
	if got.Ref != "flaky test" || got.Speed != 2 || got.ShowThinking || got.ReadSession == nil || got.Sleep == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdReplay, "0196a3b2", "--speed", "0", "--show-thinking"); got.Speed != 0 || !got.ShowThinking {
		t.Errorf("--speed 0 --show-thinking: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdReplay, "0196a3b2", "--speed", "-1"), "--speed must be 0 (no pauses) or more")
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdReplay, "0196a3b2", "--speed", "fast"), "--speed")
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdReplay), "missing arguments")
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdReplay, "one", "two"), "too many arguments")
}
