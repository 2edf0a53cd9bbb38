package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
)

// trickle is a reply that sends an event of kind every tick until done
// (then it completes with text) or until the call is given up.
func (p *scripted) trickle(kind string, tick time.Duration, done <-chan time.Time) *scripted {
	p.replies = append(p.replies, func(ctx context.Context, on func(loom.StreamEvent)) (*loom.ModelResponse, error) {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-done:
				return &loom.ModelResponse{Parts: []loom.Part{{Type: loom.PartText, Text: "done at last"}}}, nil
			case <-t.C:
				on(loom.StreamEvent{Kind: kind, Text: "more "})
			}
		}
	})
	return p
}

// onlyUserMessage fails the test unless session s holds the user
// message alone: a turn that timed out stores nothing partial.
func onlyUserMessage(t *testing.T, st loom.Store, s *loom.Session) {
	t.Helper()
	msgs, _ := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	if len(msgs) != 1 || msgs[0].Role != loom.RoleUser {
		t.Fatalf("after the timeout the session holds %+v", msgs)
	}
}

func TestSilentStreamTimesOut(t *testing.T) {
	l, st, s := setup(t, (&scripted{}).hang())
	l.StreamIdleTimeout = 50 * time.Millisecond
	start := time.Now()
	_, err := l.Turn(context.Background(), s, "anyone there?", nil)
	var te *agent.TimeoutError
	if !errors.As(err, &te) || te.Setting != agent.SettingStreamIdleTimeout || te.Limit != l.StreamIdleTimeout {
		t.Fatalf("err = %v, want the stream idle timeout", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("gave up after %v", took)
	}
	if err.Error() != "openai sent nothing for 50ms, so the turn was stopped (stream_idle_timeout)" {
		t.Fatalf("message %q", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || agent.IsCancelled(err) {
		t.Fatalf("%v is a deadline, not a cancellation", err)
	}
	onlyUserMessage(t, st, s)
}

// Whatever arrives keeps a stream alive, also what has no text; progress
// events are not passed on to the caller (the stored prompt's event is).
func TestBusyStreamIsNotSilent(t *testing.T) {
	p := (&scripted{}).trickle(loom.EventProgress, 10*time.Millisecond, time.After(300*time.Millisecond))
	l, _, s := setup(t, p)
	l.StreamIdleTimeout = 100 * time.Millisecond
	var kinds []string
	res, err := l.Turn(context.Background(), s, "a long tool call, please", func(e agent.Event) {
		if e.Kind != agent.EventStored {
			kinds = append(kinds, e.Kind)
		}
	})
	if err != nil || res.Text != "done at last" {
		t.Fatalf("%+v, %v", res, err)
	}
	if len(kinds) != 0 {
		t.Fatalf("events passed on: %v", kinds)
	}
}

// A stream that never goes silent still ends with the turn's limit.
func TestTurnTimesOut(t *testing.T) {
	p := (&scripted{}).trickle(loom.EventText, 10*time.Millisecond, nil)
	l, st, s := setup(t, p)
	l.TurnTimeout = 200 * time.Millisecond
	l.StreamIdleTimeout = 100 * time.Millisecond
	_, err := l.Turn(context.Background(), s, "talk forever", nil)
	var te *agent.TimeoutError
	if !errors.As(err, &te) || te.Setting != agent.SettingTurnTimeout || err.Error() != "the turn took longer than 200ms and was stopped (turn_timeout)" {
		t.Fatalf("err = %v, want the turn timeout", err)
	}
	onlyUserMessage(t, st, s)
	// The caller giving up is not a timeout.
	p.hang()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := l.Turn(ctx, s, "never mind", nil); !agent.IsCancelled(err) || errors.As(err, &te) {
		t.Fatalf("cancelled turn: %v", err)
	}
}
