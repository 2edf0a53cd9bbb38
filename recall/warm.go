package recall

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

// A warm recall answers agents' hooks from a long-running loom that
// keeps the store open and the secret rules compiled, over a Unix
// socket only its user can reach: the capture service's (loom capture
// run), or one a hook started for the sessions of its store (loom
// recall serve, which ends after a while without a question). A hook's
// process then does only what a client does (reads its input, finds
// the project, asks, prints), which a busy machine's scheduler fits in
// a hook's budget where opening the store and compiling the rules in
// the hook's own process does not. Without a warm recall the hook does
// it all itself.
//
// Each store has its socket (WarmSocket), and one warm recall at a
// time answers on it: the one holding the lock file beside it.

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
	// Version is the asking loom's: a warm recall of another version
	// (one started before loom was updated) does not answer.
	Version string `json:"version,omitempty"`
}

// Answer is a warm recall's answer: the hook's context text, or why
// there is none.
type Answer struct {
	Text    string `json:"text"`
	Partial bool   `json:"partial,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ErrOtherStore is a warm recall's error for a question about a store
// that is not its own (or that it cannot answer as the asking loom
// would: it is of another version).
var ErrOtherStore = errors.New("a warm recall of another store")

// ErrServing is Serve's error when another warm recall answers on the
// socket.
var ErrServing = errors.New("another loom answers")

// ErrNotAnswering is Ask's error when no warm recall listens on the
// socket (a capture that ended left it).
var ErrNotAnswering = errors.New("no warm recall answers")

// WarmSocket is where the warm recall of store (its URL) listens, for
// a loom whose state directory is state: a name of its own for each
// store, so that the hooks of one store never wait on a warm recall of
// another.
func WarmSocket(state, store string) string {
	sum := sha256.Sum256([]byte(store))
	return filepath.Join(state, "recall", "warm-"+hex.EncodeToString(sum[:6])+".sock")
}

// lockPath is the lock file of the warm recall on the socket at path.
func lockPath(path string) string { return strings.TrimSuffix(path, ".sock") + ".lock" }

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
// error when it cannot (ErrServing: another warm recall answers there
// already; or the path is too long for a socket). When ctx is done the
// socket is removed and the lock released, and then done is closed.
func Serve(ctx context.Context, path string, answer func(context.Context, Question) Answer) (done <-chan struct{}, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("warm recall: %w", err)
	}
	// The lock makes the check and the listening one step: two warm
	// recalls starting at once never both listen, the second removing
	// the socket of the first.
	unlock, err := lock(lockPath(path))
	if errors.Is(err, errLocked) {
		return nil, fmt.Errorf("warm recall: %w on %s", ErrServing, path)
	}
	if err != nil {
		return nil, fmt.Errorf("warm recall: %w", err)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		// A loom of a version before the lock.
		c.Close()
		unlock()
		return nil, fmt.Errorf("warm recall: %w on %s", ErrServing, path)
	}
	// A socket no one listens on is left by a process that ended.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		unlock()
		return nil, fmt.Errorf("warm recall: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", path)
	if err != nil {
		unlock()
		return nil, fmt.Errorf("warm recall: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		unlock()
		return nil, fmt.Errorf("warm recall: %w", err)
	}
	stopped := make(chan struct{})
	go func() {
		<-ctx.Done()
		// Closing the listener removes the socket.
		ln.Close()
		unlock()
		close(stopped)
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
	return stopped, nil
}

// Answering reports whether a warm recall holds the socket at path: it
// answers there, or is about to (it has the lock, and opens the store).
// Asking takes no lock, so it never stands in the way of one starting.
// Where that cannot be known, false.
func Answering(path string) bool { return Holder(path) != 0 }

// Holder is the process id of the warm recall that holds the socket at
// path, 0 when none does or that cannot be known.
func Holder(path string) int { return lockHolder(lockPath(path)) }

// WaitFree waits until no warm recall holds the socket at path, or ctx
// is done.
func WaitFree(ctx context.Context, path string) error {
	return waitLock(ctx, lockPath(path))
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
// redacts nothing) when a question asks. A question of another version
// of loom than version is answered ErrOtherStore.
func Answerer(store, version string, st loom.Engine, redact func() *secrets.Detector) func(context.Context, Question) Answer {
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
		if q.Store != store || q.Version != version {
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
