package main

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/envelope"
	"github.com/loomhq/loom/hub"
	"github.com/loomhq/loom/internal/workload"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/syncrun"
)

// syncMain measures sync's budgets (issue 26): the initial sync of a
// store of messages messages from one machine to another through a hub
// (loom serve's handler on a real loopback listener, over SQLite), the
// sync of one more turn, and what the sync log adds to the store's size.
// Both machines and the hub run in this process, on the same two cores.
func syncMain(ctx context.Context, out io.Writer, dir string, messages, runs int) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	work, err := os.MkdirTemp(dir, "sync-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	open := func(name string) (*sqlite.Store, error) { return sqlite.Open(ctx, filepath.Join(work, name)) }
	a, err := open("a.db")
	if err != nil {
		return err
	}
	defer a.Close()
	fmt.Fprintf(os.Stderr, "sync: generating %d messages\n", messages)
	if err := fillForSync(ctx, a, messages); err != nil {
		return err
	}
	before, err := sizeOnDisk(ctx, a.Path())
	if err != nil {
		return err
	}
	h, err := startHub(ctx, filepath.Join(work, "hub.db"))
	if err != nil {
		return err
	}
	defer h.Close()
	c := &hub.Client{URL: h.URL, Token: h.token}
	key, err := envelope.NewKey()
	if err != nil {
		return err
	}
	b, err := open("b.db")
	if err != nil {
		return err
	}
	defer b.Close()
	if _, err := b.EnableSync(ctx); err != nil {
		return err
	}
	// syncBoth syncs a, which pushes its new records, then b, which
	// pulls and applies them, as `loom sync` on each machine does.
	syncBoth := func() (pushed, pulled int, err error) {
		ra, err := syncrun.Sync(ctx, c, a, key)
		if err != nil {
			return 0, 0, err
		}
		rb, err := syncrun.Sync(ctx, c, b, key)
		if err == nil && len(rb.Waiting) > 0 {
			err = fmt.Errorf("records wait: %+v", rb.Waiting)
		}
		return ra.Pushed, rb.Pulled, err
	}

	fmt.Fprintf(os.Stderr, "sync: initial sync\n")
	t0 := time.Now()
	if _, err := a.EnableSync(ctx); err != nil {
		return err
	}
	logged := time.Since(t0)
	pushed, pulled, err := syncBoth()
	if err != nil {
		return err
	}
	initial := time.Since(t0)
	if pushed != pulled {
		return fmt.Errorf("initial sync: %d records pushed, %d applied", pushed, pulled)
	}
	var got int
	b.DB().QueryRow(`SELECT count(*) FROM messages`).Scan(&got)
	if got != messages {
		return fmt.Errorf("initial sync: the second machine holds %d messages of %d", got, messages)
	}
	after, err := sizeOnDisk(ctx, a.Path())
	if err != nil {
		return err
	}

	fmt.Fprintf(os.Stderr, "sync: %d turns one at a time\n", runs)
	s := &loom.Session{UserID: "bench", Key: "cli:sync-bench"}
	var turns []time.Duration
	for i := range runs {
		t := time.Now()
		for _, role := range []string{loom.RoleUser, loom.RoleAssistant} {
			m := &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprintf("turn %d: %s", i, strings.Repeat("a sentence of a reply ", 30))}}}
			if err := a.Append(ctx, s, m); err != nil {
				return err
			}
		}
		if _, pulled, err := syncBoth(); err != nil || pulled == 0 {
			return fmt.Errorf("turn %d: %d records applied, %v", i, pulled, err)
		}
		turns = append(turns, time.Since(t))
	}
	slices.Sort(turns)

	initialOK, turnOK, sizeOK := initial <= 30*time.Second, pct(turns, 0.5) <= 200*time.Millisecond, float64(after) <= 1.3*float64(before)
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	fmt.Fprintf(out, "| sync | budget | figure | |\n|---|---|---|---|\n")
	fmt.Fprintf(out, "| initial sync of %d messages (%d records: log of the history, push, pull, apply) | ≤ 30 s | %.1f s (log written in %.1f s) | %s |\n",
		messages, pushed, initial.Seconds(), logged.Seconds(), verdict(initialOK))
	fmt.Fprintf(out, "| incremental sync of one turn (append 2 messages, push, pull, apply) | ≤ 200 ms | median %.1f ms, p90 %.1f ms, %d runs | %s |\n",
		ms(pct(turns, 0.5)), ms(pct(turns, 0.9)), len(turns), verdict(turnOK))
	fmt.Fprintf(out, "| size with the sync log | ≤ 1.3× the store | %.1f MB → %.1f MB, %.2f× | %s |\n",
		float64(before)/1e6, float64(after)/1e6, float64(after)/float64(before), verdict(sizeOK))
	return nil
}

// fillForSync imports sessions of 100 messages into st, messages in all,
// of text like an agent's.
func fillForSync(ctx context.Context, st *sqlite.Store, messages int) error {
	now := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Hour)
	var batch []*loom.SessionData
	for n := 0; n < messages; {
		d := &loom.SessionData{Session: &loom.Session{ID: loom.NewID(), UserID: "bench", Kind: loom.KindMain, CreatedAt: now, UpdatedAt: now}}
		for i := 0; i < 100 && n < messages; i, n = i+1, n+1 {
			d.Messages = append(d.Messages, workload.Message(i, workload.Text(n), now))
		}
		batch = append(batch, d)
		if len(batch) == 50 || n == messages {
			if err := st.Import(ctx, batch); err != nil {
				return err
			}
			batch = nil
		}
	}
	return nil
}

// benchHub is a hub for the sync benchmarks: loom serve's handler over an
// SQLite store on a real loopback listener, and a token for it.
type benchHub struct {
	*httptest.Server
	store *sqlite.Store
	token string
}

// startHub opens the hub's store at path, serves it and makes a token.
func startHub(ctx context.Context, path string) (*benchHub, error) {
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	h := &benchHub{Server: httptest.NewServer(server.New(server.Config{Store: st, Tokens: st})), store: st}
	if _, h.token, err = st.CreateToken(ctx, "bench", "bench", 0); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// Close stops the hub and closes its store.
func (h *benchHub) Close() {
	h.Server.Close()
	h.store.Close()
}
