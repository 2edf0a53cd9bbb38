package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A procRun is one timed run of a process: its wall time (to the answer,
// for an MCP server) and its CPU time (user + system).
type procRun struct{ wall, cpu time.Duration }

// A procOp is a command and the minimal program it is measured beside;
// each runs once and returns its figures.
type procOp struct {
	name         string
	loom, floor  func(context.Context) (procRun, error)
	floorProgram string
	// apart marks a row that is no budget: it shows where a gap lies.
	apart bool
}

// processMain measures loom's short commands as whole processes, each
// beside a minimal Go program doing the same (the programs of
// cmd/loom-bench/floor), timed in pairs whose order alternates, runs
// times after one untimed pair, and writes the figures as Markdown.
func processMain(ctx context.Context, w io.Writer, c config) error {
	dir := filepath.Dir(c.db)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "store %s\n", c.db)
	if _, _, err := ensureStore(ctx, c); err != nil {
		return err
	}
	bins, err := buildProcessPrograms(ctx, dir, c.loomBin)
	if err != nil {
		return err
	}
	env := append(os.Environ(), "LOOM_DB="+c.db, "LOOM_USER=bench", "LOOM_HOME="+dir, "NO_COLOR=1")
	hookJSON, err := prepareHook(ctx, dir, bins["loom"], env)
	if err != nil {
		return err
	}
	run := func(stdin []byte, bin string, args ...string) func(context.Context) (procRun, error) {
		return func(ctx context.Context) (procRun, error) {
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = env
			cmd.Stdin = bytes.NewReader(stdin)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			t0 := time.Now()
			err := cmd.Run()
			wall := time.Since(t0)
			if err != nil {
				return procRun{}, fmt.Errorf("%s %s: %v: %s", filepath.Base(bin), strings.Join(args, " "), err, out.Bytes())
			}
			return usageOf(cmd.ProcessState, wall), nil
		}
	}
	loom, sqlread := bins["loom"], bins["sqlread"]
	ops := []procOp{
		{"`loom version`", run(nil, loom, "version"), run(nil, bins["hello"]), "hello-world printing a version line", false},
		{"`loom version`, beside its libraries", run(nil, loom, "version"), run(nil, bins["deps"]),
			"hello-world linking the libraries loom links (`floor/deps`): what is left is loom's own", true},
		{"`loom session list --all-projects`", run(nil, loom, "session", "list", "--all-projects"),
			run(nil, sqlread, "list", c.db, "bench"), "opens the store, lists the 20 most recent sessions", false},
		{"`loom search --all-projects " + RareWord + "`", run(nil, loom, "search", "--all-projects", RareWord),
			run(nil, sqlread, "search", c.db, "bench", RareWord), "opens the store, one FTS5 query, top 20 with snippets", false},
		{"`loom session import --hook claude-code`, file unchanged", run(hookJSON, loom, "session", "import", "--hook", "claude-code"),
			run(hookJSON, sqlread, "hook", c.db, "bench"), "reads the hook JSON, opens the store, stats the recorded files", false},
		{"`loom mcp` to the first search answered", mcpRun(env, RareWord, loom, "mcp"),
			mcpRun(env, RareWord, bins["mcpserve"], c.db, "bench"), "official Go SDK stdio server, one search_sessions tool on the same file", false},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Whole processes, %d runs each timed in pairs (the order alternating, after one untimed pair); wall time to exit (to the search's answer for MCP servers) and CPU time (user + system) of the process.\n\n", c.runs)
	fmt.Fprintln(&b, "| command | loom wall min / median / max | floor wall min / median / max | wall ratio (medians) | CPU median loom / floor | budget ≤ 1.5× | floor program |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|")
	for _, op := range ops {
		if !c.ops.MatchString(op.name) {
			continue
		}
		lr, fr, err := pairs(ctx, c.runs, op.loom, op.floor)
		if err != nil {
			return fmt.Errorf("%s: %w", op.name, err)
		}
		lw, fw := stat(lr, func(r procRun) time.Duration { return r.wall }), stat(fr, func(r procRun) time.Duration { return r.wall })
		lc, fc := stat(lr, func(r procRun) time.Duration { return r.cpu }), stat(fr, func(r procRun) time.Duration { return r.cpu })
		ratio := float64(lw[1]) / float64(fw[1])
		verdict := "met"
		switch {
		case op.apart:
			verdict = "(no budget)"
		case ratio > 1.5:
			verdict = "**missed**"
		}
		fmt.Fprintf(&b, "| %s | %.1f / %.1f / %.1f ms | %.1f / %.1f / %.1f ms | %.2f× | %.1f / %.1f ms | %s | %s |\n",
			op.name, ms(lw[0]), ms(lw[1]), ms(lw[2]), ms(fw[0]), ms(fw[1]), ms(fw[2]), ratio,
			ms(lc[1]), ms(fc[1]), verdict, op.floorProgram)
		fmt.Fprintf(os.Stderr, "measured %s\n", op.name)
	}
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// pairs runs a and b runs times each, in pairs whose order alternates,
// after one untimed pair.
func pairs(ctx context.Context, runs int, a, b func(context.Context) (procRun, error)) (ra, rb []procRun, err error) {
	for i := -1; i < runs; i++ {
		fns := []func(context.Context) (procRun, error){a, b}
		if i%2 != 0 {
			fns[0], fns[1] = b, a
		}
		var got [2]procRun
		for k, fn := range fns {
			if got[k], err = fn(ctx); err != nil {
				return nil, nil, err
			}
		}
		if i%2 != 0 {
			got[0], got[1] = got[1], got[0]
		}
		if i >= 0 {
			ra, rb = append(ra, got[0]), append(rb, got[1])
		}
	}
	return ra, rb, nil
}

// stat is the min, median and max of one figure of runs.
func stat(runs []procRun, of func(procRun) time.Duration) [3]time.Duration {
	d := make([]time.Duration, len(runs))
	for i, r := range runs {
		d[i] = of(r)
	}
	slices.Sort(d)
	return [3]time.Duration{d[0], d[len(d)/2], d[len(d)-1]}
}

func usageOf(ps *os.ProcessState, wall time.Duration) procRun {
	return procRun{wall: wall, cpu: ps.UserTime() + ps.SystemTime()}
}

// buildProcessPrograms builds loom (unless bin names one) and every
// floor program into dir, and returns their paths by name.
func buildProcessPrograms(ctx context.Context, dir, bin string) (map[string]string, error) {
	return buildPrograms(ctx, dir, bin, "hello", "deps", "sqlread", "mcpserve")
}

// buildPrograms builds loom (unless bin names one) and the floor
// programs named (cmd/loom-bench/floor/NAME) into dir, and returns
// their paths by name.
func buildPrograms(ctx context.Context, dir, bin string, floors ...string) (map[string]string, error) {
	bins := map[string]string{"loom": bin}
	pkgs := map[string]string{}
	for _, name := range floors {
		pkgs[name] = "./cmd/loom-bench/floor/" + name
	}
	if bin == "" {
		pkgs["loom"] = "./cmd/loom"
	}
	for name, pkg := range pkgs {
		out := filepath.Join(dir, "proc-"+name)
		build := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("build %s: %w", pkg, err)
		}
		bins[name] = out
	}
	return bins, nil
}

// prepareHook copies a Claude Code session (with its sub-agent files)
// into dir, imports it once through the hook, and returns the hook JSON
// that names it: every later run finds it unchanged.
func prepareHook(ctx context.Context, dir, loom string, env []string) ([]byte, error) {
	const sample = "testdata/agent-sessions/claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d"
	dst := filepath.Join(dir, "hook", filepath.Base(sample))
	if err := os.RemoveAll(filepath.Dir(dst)); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	if err := os.CopyFS(dst, os.DirFS(sample)); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(sample + ".jsonl")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(dst+".jsonl", data, 0o644); err != nil {
		return nil, err
	}
	in, _ := json.Marshal(map[string]string{"transcript_path": dst + ".jsonl", "session_id": filepath.Base(dst), "hook_event_name": "Stop"})
	cmd := exec.CommandContext(ctx, loom, "session", "import", "--hook", "claude-code")
	cmd.Env, cmd.Stdin = env, bytes.NewReader(in)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("first import through the hook: %v: %s", err, out)
	}
	return in, nil
}

// mcpRun starts an MCP stdio server and times it from the start to the
// answer of its first search_sessions call for word, made as a client
// makes it: initialize, then the initialized notification and the call.
// The server is then closed (its stdin) and waited for, untimed.
func mcpRun(env []string, word, bin string, args ...string) func(context.Context) (procRun, error) {
	return func(ctx context.Context) (procRun, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return procRun{}, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return procRun{}, err
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			return procRun{}, err
		}
		lines := bufio.NewReader(stdout)
		answer := func(id int) (json.RawMessage, error) {
			for {
				line, err := lines.ReadBytes('\n')
				if err != nil {
					return nil, fmt.Errorf("no answer to request %d: %v: %s", id, err, stderr.Bytes())
				}
				var m struct {
					ID     *int            `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if json.Unmarshal(line, &m) == nil && m.ID != nil && *m.ID == id {
					if m.Error != nil {
						return nil, fmt.Errorf("request %d: %s", id, m.Error)
					}
					return m.Result, nil
				}
			}
		}
		send := func(s string) { io.WriteString(stdin, s+"\n") }
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"loom-bench","version":"1"}}}`)
		_, err = answer(1)
		var res json.RawMessage
		if err == nil {
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_sessions","arguments":{"query":"` + word + `","all_projects":true}}}`)
			res, err = answer(2)
		}
		wall := time.Since(t0)
		stdin.Close()
		io.Copy(io.Discard, stdout)
		werr := cmd.Wait()
		if err != nil {
			return procRun{}, err
		}
		if werr != nil {
			return procRun{}, fmt.Errorf("%s exited: %v: %s", filepath.Base(bin), werr, stderr.Bytes())
		}
		var r struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(res, &r) != nil || r.IsError || !bytes.Contains(res, []byte(word)) {
			return procRun{}, errors.New(filepath.Base(bin) + ": the search found nothing: " + string(res))
		}
		return usageOf(cmd.ProcessState, wall), nil
	}
}
