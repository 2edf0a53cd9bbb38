package recall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

// A warm recall answers agents' hooks from a long-running loom (the
// capture service, loom capture run) that keeps the store open and the
// secret rules compiled, over a Unix socket only its user can reach. A
// hook's process then does only what a client does (reads its input,
// finds the project, asks, prints), which a busy machine's scheduler
// fits in a hook's budget where opening the store and compiling the
// rules in the hook's own process does not. Without a warm recall the
// hook does it all itself.

// Question is what a hook asks a warm recall: one JSON value a
// connection.
type Question struct {
	// Store is the store the hook would open (its URL): a warm recall
	// of another store does not answer.
	Store     string `json:"store"`
	Prompt    string `json:"prompt"`
	UserID    string `json:"user_id"`
	ProjectID string `json:"project_id"`
	Tokens    int    `json:"tokens,omitempty"`
	// Redact asks for the text redacted by the warm recall's detector
	// (the hook's [mcp] redact); false hands it as stored.
	Redact bool `json:"redact"`
	// Deadline is when the hook must have its answer.
	Deadline time.Time `json:"deadline"`
}

// Answer is a warm recall's answer: the hook's context text, or why
// there is none.
type Answer struct {
	Text    string `json:"text"`
	Partial bool   `json:"partial,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ErrOtherStore is a warm recall's error for a question about a store
// that is not its own.
var ErrOtherStore = errors.New("a warm recall of another store")

// ErrNotAnswering is Ask's error when no warm recall listens on the
// socket (a capture that ended left it).
var ErrNotAnswering = errors.New("no warm recall answers")

// WarmSocket is where the warm recall of a loom whose state directory
// is state listens.
func WarmSocket(state string) string { return filepath.Join(state, "recall", "warm.sock") }

// maxQuestion bounds a question's size: a hook's prompt is bounded as
// its input is.
const maxQuestion = 1 << 20

// warmTexts is how many texts a warm recall remembers the secrets of.
const warmTexts = 8192

// maxWarmTime bounds how long a warm recall works on one question,
// whatever its deadline says.
const maxWarmTime = 10 * time.Second

// Serve answers the questions of hooks on the Unix socket at path with
// answer, until ctx is done. It returns once it listens, or with an
// error when it cannot (another warm recall answers there already, or
// the path is too long for a socket); the socket is removed when ctx is
// done.
func Serve(ctx context.Context, path string, answer func(context.Context, Question) Answer) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("warm recall: %w", err)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("warm recall: another loom answers on %s", path)
	}
	// A socket no one listens on is left by a process that ended.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("warm recall: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		return fmt.Errorf("warm recall: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("warm recall: %w", err)
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveOne(ctx, c, answer)
		}
	}()
	return nil
}

func serveOne(ctx context.Context, c net.Conn, answer func(context.Context, Question) Answer) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(maxWarmTime))
	var q Question
	if err := json.NewDecoder(io.LimitReader(c, maxQuestion)).Decode(&q); err != nil {
		_ = json.NewEncoder(c).Encode(Answer{Error: "not a question: " + err.Error()})
		return
	}
	deadline := q.Deadline
	if deadline.IsZero() || time.Until(deadline) > maxWarmTime {
		deadline = time.Now().Add(maxWarmTime)
	}
	qctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	_ = json.NewEncoder(c).Encode(answer(qctx, q))
}

// Ask asks the warm recall on the Unix socket at path, by ctx's
// deadline. An error says it could not be asked (none listens, it is of
// another store, it took too long): the hook does the recall itself. An
// answer may be a failure of the recall (Answer.Error), which a recall
// in the hook's own process would meet too.
func Ask(ctx context.Context, path string, q Question) (*Answer, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotAnswering, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	if err := json.NewEncoder(c).Encode(q); err != nil {
		return nil, err
	}
	var a Answer
	if err := json.NewDecoder(io.LimitReader(c, 16<<20)).Decode(&a); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if a.Error == ErrOtherStore.Error() {
		return nil, ErrOtherStore
	}
	return &a, nil
}

// Answerer answers questions about store (its URL) from st, redacting
// with the detector redact makes (once, when first asked for; nil
// redacts nothing) when a question asks.
func Answerer(store string, st loom.Store, redact func() *secrets.Detector) func(context.Context, Question) Answer {
	detector := sync.OnceValue(func() *secrets.Detector {
		if redact == nil {
			return nil
		}
		d := redact()
		if d == nil {
			return nil
		}
		// Hook after hook reads the same turns: what was found in a
		// text is remembered, not read again.
		return d.Remembering(warmTexts)
	})
	// Compiled at once, not at the first hook's question.
	go detector()
	return func(ctx context.Context, q Question) Answer {
		if q.Store != store {
			return Answer{Error: ErrOtherStore.Error()}
		}
		o := Options{Prompt: q.Prompt, UserID: q.UserID, ProjectID: q.ProjectID, Tokens: q.Tokens, Deadline: q.Deadline}
		if q.Redact {
			o.Redact = detector()
		}
		res, err := Recall(ctx, st, o)
		if err != nil && (ctx.Err() != nil || errors.Is(err, loom.ErrSearchTime)) {
			// Out of time: nothing, as a hook gives nothing then.
			return Answer{Partial: true}
		}
		if err != nil {
			return Answer{Error: err.Error()}
		}
		return Answer{Text: res.Text(), Partial: res.Partial}
	}
}
