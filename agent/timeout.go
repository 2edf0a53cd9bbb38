package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

// Default time limits of a turn: a provider that stops sending must not
// hold a turn, and with it its session's lock, until the process ends.
const (
	DefaultStreamIdleTimeout = 60 * time.Second
	DefaultTurnTimeout       = 10 * time.Minute
)

// The settings that set the limits, as config.toml names them.
const (
	SettingStreamIdleTimeout = "stream_idle_timeout"
	SettingTurnTimeout       = "turn_timeout"
)

// TimeoutError is a turn stopped by one of its time limits: a model
// stream that sent nothing for the stream idle timeout, or a turn that
// ran longer than the turn timeout. It fails the turn as a provider
// error does: the user message stays stored, nothing partial is.
type TimeoutError struct {
	// Setting is the limit that was reached: SettingStreamIdleTimeout
	// or SettingTurnTimeout.
	Setting string
	Limit   time.Duration
	// Provider is the provider whose stream went silent.
	Provider string
}

func (e *TimeoutError) Error() string {
	if e.Setting == SettingStreamIdleTimeout {
		return fmt.Sprintf("%s sent nothing for %s, so the turn was stopped (%s)", e.Provider, e.Limit, e.Setting)
	}
	return fmt.Sprintf("the turn took longer than %s and was stopped (%s)", e.Limit, e.Setting)
}

// Is makes errors.Is(err, context.DeadlineExceeded) true: the turn ran
// out of time. It is never context.Canceled, which means someone
// stopped the turn on purpose.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// withTurnLimit returns the context of a turn, which ends after the
// loop's turn timeout, and a function that tells the error of a turn
// that failed because it did (a *TimeoutError) from other errors.
func (l *Loop) withTurnLimit(ctx context.Context) (context.Context, context.CancelFunc, func(error) error) {
	limit := &TimeoutError{Setting: SettingTurnTimeout, Limit: orDefault(l.TurnTimeout, DefaultTurnTimeout)}
	tctx, cancel := context.WithTimeoutCause(ctx, limit.Limit, limit)
	explain := func(err error) error {
		// Only this turn's own limit: a caller that gave up, or the
		// limit of a turn this one runs in (a sub-agent's parent),
		// stays theirs.
		if err != nil && ctx.Err() == nil && context.Cause(tctx) == error(limit) {
			return limit
		}
		return err
	}
	return tctx, cancel, explain
}

// stream calls the model, giving up when its stream sends nothing for the
// loop's stream idle timeout. Text and reasoning go to onEvent (when not
// nil); that anything arrived only restarts the wait.
func (l *Loop) stream(ctx context.Context, req *loom.ModelRequest, onEvent func(loom.StreamEvent)) (*loom.ModelResponse, error) {
	silent := &TimeoutError{Setting: SettingStreamIdleTimeout, Limit: orDefault(l.StreamIdleTimeout, DefaultStreamIdleTimeout), Provider: l.Provider.Name()}
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	idle := time.AfterFunc(silent.Limit, func() { stop(silent) })
	defer idle.Stop()
	resp, err := l.Provider.Stream(sctx, req, func(ev loom.StreamEvent) {
		idle.Reset(silent.Limit)
		if ev.Kind != loom.EventProgress && onEvent != nil {
			onEvent(ev)
		}
	})
	if err != nil && ctx.Err() == nil && context.Cause(sctx) == error(silent) {
		return nil, silent
	}
	return resp, err
}
