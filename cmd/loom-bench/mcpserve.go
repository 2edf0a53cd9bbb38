package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// mcpServeUsers is how many users (tokens) the /mcp clients share.
const mcpServeUsers = 5

// mcpQuery is what the clients search for: a word in about one message
// of a hundred, so that a search is quick on a busy machine.
const mcpQuery = "glacier"

// mcpThink is each client's pause between calls: the figure is the
// server's memory under many clients, not its throughput on a shared
// machine.
const mcpThink = 20 * time.Millisecond

// mcpServeFigures is what -mcp-serve measured.
type mcpServeFigures struct {
	clients, leaky int
	elapsed        time.Duration
	calls, opened  atomic.Int64
	tooMany, full  atomic.Int64
	reconnects     atomic.Int64
	errs           atomic.Int64
	firstErr       atomic.Value
	// rss holds the server's VmRSS in KiB, once a second.
	mu  sync.Mutex
	rss []int64
}

func (f *mcpServeFigures) fail(err error) {
	f.errs.Add(1)
	f.firstErr.CompareAndSwap(nil, err.Error())
}

// mcpServeMain runs `loom serve` as its own process over a small store
// and drives clients at its /mcp for d: most keep one session and
// search in it; one in five initializes a new session for every search
// and never closes it, as a careless client would. It reports the
// server's resident memory over the run.
func mcpServeMain(ctx context.Context, out io.Writer, dir, bin string, clients int, d time.Duration) error {
	work, bin, err := workDir(ctx, dir, "mcpserve-", bin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	db := filepath.Join(work, "sessions.db")
	if err := mcpServeStore(ctx, db); err != nil {
		return fmt.Errorf("generate the store: %w", err)
	}
	env := append(os.Environ(), "LOOM_HOME="+filepath.Join(work, "home"), "LOOM_USER=bench")
	var tokens []string
	for u := range mcpServeUsers {
		cmd := exec.CommandContext(ctx, bin, "--db", db, "token", "create", "--user", fmt.Sprintf("bench%d", u))
		cmd.Env, cmd.Stderr = env, os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("loom token create: %w", err)
		}
		tokens = append(tokens, strings.TrimSpace(string(b)))
	}
	// Its access log, a line a request, is kept apart.
	srv, err := startServe(ctx, bin, append(env, "LOOM_DB="+db), filepath.Join(work, "serve.log"))
	if err != nil {
		return err
	}
	defer func() {
		srv.cmd.Process.Signal(os.Interrupt)
		srv.cmd.Wait()
	}()
	endpoint := srv.base + "/mcp"
	pid := srv.pid

	f := &mcpServeFigures{clients: clients, leaky: clients / 5}
	sample := func() {
		if kb, err := vmRSS(pid); err == nil {
			f.mu.Lock()
			f.rss = append(f.rss, kb)
			f.mu.Unlock()
		}
	}
	sample()
	runCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	stopSampling := every(time.Second, sample)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * clients}}
	fmt.Fprintf(os.Stderr, "mcp-serve: %d clients for %s (server pid %d)\n", clients, d, pid)
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		token := tokens[i%mcpServeUsers]
		if i < f.leaky {
			wg.Go(func() { leakyMCPClient(runCtx, f, hc, endpoint, token) })
		} else {
			wg.Go(func() { steadyMCPClient(runCtx, f, hc, endpoint, token) })
		}
	}
	wg.Wait()
	f.elapsed = time.Since(t0)
	stopSampling()
	sample()
	time.Sleep(5 * time.Second)
	sample()
	f.print(out)
	if e, ok := f.firstErr.Load().(string); ok && f.errs.Load() > f.calls.Load()/100 {
		return fmt.Errorf("%d calls failed, the first: %s", f.errs.Load(), e)
	}
	return nil
}

// mcpServeStore makes a store of a few sessions for each user.
func mcpServeStore(ctx context.Context, path string) error {
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	g := newGenerator(11)
	var batch []*loom.SessionData
	for u := range mcpServeUsers {
		p := loom.Project{ID: fmt.Sprintf("%016x", u+1), Name: fmt.Sprintf("project%d", u), Root: fmt.Sprintf("/src/project%d", u)}
		for range 10 {
			batch = append(batch, g.session(fmt.Sprintf("bench%d", u), 200, p))
		}
	}
	return st.Import(ctx, batch)
}

// vmRSS reads a process's resident memory in KiB.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}

type bearerRT struct {
	token string
	next  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// steadyMCPClient keeps one session (a new one when the server has
// closed it) and searches in it until ctx is done.
func steadyMCPClient(ctx context.Context, f *mcpServeFigures, hc *http.Client, endpoint, token string) {
	client := &http.Client{Transport: bearerRT{token, hc.Transport}}
	for ctx.Err() == nil {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "loom-bench", Version: "1"}, nil).
			Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: client, MaxRetries: -1}, nil)
		if err != nil {
			if ctx.Err() == nil {
				f.fail(fmt.Errorf("connect: %w", err))
				pause(ctx, time.Second)
			}
			continue
		}
		f.opened.Add(1)
		for ctx.Err() == nil {
			c := &mcpClient{cs: cs}
			if err := c.search(ctx, mcpQuery); err != nil {
				if ctx.Err() == nil {
					f.fail(err)
					f.reconnects.Add(1)
				}
				break
			}
			f.calls.Add(1)
			pause(ctx, mcpThink)
		}
		cs.Close()
	}
}

// leakyMCPClient initializes a session for every search and leaves it
// open; refused, it waits as Retry-After says (at most a second).
func leakyMCPClient(ctx context.Context, f *mcpServeFigures, hc *http.Client, endpoint, token string) {
	post := func(sid, body string) (*http.Response, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
		if err != nil {
			return nil, "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}
	for ctx.Err() == nil {
		resp, body, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"loom-bench","version":"1"}}}`)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			f.fail(err)
			pause(ctx, time.Second)
			continue
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
			if resp.StatusCode == http.StatusTooManyRequests {
				f.tooMany.Add(1)
			} else {
				f.full.Add(1)
			}
			// Waiting the whole Retry-After would leave the limit
			// untried; a second keeps it under pressure.
			pause(ctx, time.Second)
			continue
		case resp.StatusCode != http.StatusOK:
			f.fail(fmt.Errorf("initialize: %d %s", resp.StatusCode, body))
			pause(ctx, time.Second)
			continue
		}
		f.opened.Add(1)
		sid := resp.Header.Get("Mcp-Session-Id")
		if _, _, err := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
			continue
		}
		resp, body, err = post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"`+mcpQuery+`","all_projects":true}}}`)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			f.fail(err)
		case resp.StatusCode != http.StatusOK || !strings.Contains(body, `"hits"`) || strings.Contains(body, `"isError":true`):
			f.fail(fmt.Errorf("search: %d %.200s", resp.StatusCode, body))
		default:
			f.calls.Add(1)
		}
		pause(ctx, mcpThink)
	}
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// print writes the figures as Markdown.
func (f *mcpServeFigures) print(out io.Writer) {
	f.mu.Lock()
	rss := f.rss
	f.mu.Unlock()
	if len(rss) < 3 {
		fmt.Fprintln(out, "mcp-serve: too few RSS samples")
		return
	}
	run := rss[:len(rss)-1] // the last is 5 s after the load
	peak := int64(0)
	for _, v := range run {
		peak = max(peak, v)
	}
	at := func(q float64) int64 { return run[min(len(run)-1, int(q*float64(len(run)-1)))] }
	mb := func(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }
	fmt.Fprintf(out, "## /mcp under %d clients (`loom serve` as its own process)\n\n", f.clients)
	fmt.Fprintf(out, "%d clients over %d tokens for %s: %d keep one session and call search_sessions every %s; %d initialize a new session for every call and never close it.\n\n",
		f.clients, mcpServeUsers, f.elapsed.Round(time.Second), f.clients-f.leaky, mcpThink, f.leaky)
	fmt.Fprintf(out, "| Server RSS | start | 25%% | 50%% | 75%% | end | peak | 5 s after |\n|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(out, "| VmRSS | %s | %s | %s | %s | %s | %s | %s |\n\n", mb(run[0]), mb(at(.25)), mb(at(.5)), mb(at(.75)), mb(run[len(run)-1]), mb(peak), mb(rss[len(rss)-1]))
	fmt.Fprintf(out, "Calls %d (%.0f/s), sessions opened %d, initializes refused 429 %d and 503 %d, sessions lost and reopened %d, errors %d.\n",
		f.calls.Load(), float64(f.calls.Load())/f.elapsed.Seconds(), f.opened.Load(), f.tooMany.Load(), f.full.Load(), f.reconnects.Load(), f.errs.Load())
	if e, ok := f.firstErr.Load().(string); ok {
		fmt.Fprintf(out, "First error: %s\n", e)
	}
}

// every calls f every d, in a goroutine of its own, until the function
// it returns is called: how the process benchmarks sample a server's
// memory while they load it.
func every(d time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(done) }
}
