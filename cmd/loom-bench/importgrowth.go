package main

// The import growth run: a generated history of many small Claude Code
// sessions, imported into a fresh store at 1×, 4× and 16× its size, on
// SQLite and PostgreSQL, each import a process of its own so that its
// CPU time and peak memory are its own. What it answers: does an
// import's cost grow with the sessions it brings, or with those the
// store already holds (docs/performance.md, "Import growth")?

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/sqlite"
)

// growthOptions is what the growth run measures, and where.
type growthOptions struct {
	base    int          // sessions at 1×
	factors []int        // the sizes, as multiples of base
	engines []string     // "sqlite", "postgres"
	server  string       // PostgreSQL's URL, without a search_path
	dir     string       // where the corpora and SQLite stores go
	out     string       // also write the report here
	peers   []importPeer // also import each size with these, after loom
}

// growthRow is one import: what a child process reports of it, and what
// the parent measured of the process.
type growthRow struct {
	Engine   string        `json:"engine"`
	Sessions int           `json:"sessions"`
	Messages int           `json:"messages"`
	Wall     time.Duration `json:"wall"`
	CPU      time.Duration `json:"-"`
	PeakRSS  int64         `json:"-"` // bytes
	Disk     int64         `json:"disk"`
}

// growthMain generates each size's corpus once, imports it into a fresh
// store of each engine in a child process, and prints the rows and the
// ratios between consecutive sizes.
func growthMain(ctx context.Context, w io.Writer, o growthOptions) error {
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var rows []growthRow
	for _, f := range o.factors {
		n := o.base * f
		corpus := filepath.Join(o.dir, fmt.Sprintf("growth-%d", n))
		if _, err := os.Stat(filepath.Join(corpus, "done")); err != nil {
			fmt.Fprintf(os.Stderr, "growth: generating %d sessions in %s\n", n, corpus)
			if err := os.RemoveAll(corpus); err != nil {
				return err
			}
			if err := writeGrowthCorpus(corpus, n); err != nil {
				return err
			}
		}
		for _, engine := range o.engines {
			fmt.Fprintf(os.Stderr, "growth: importing %d sessions into %s\n", n, engine)
			r, err := growthChild(ctx, self, engine, corpus, o, n)
			if err != nil {
				return fmt.Errorf("%s, %d sessions: %w", engine, n, err)
			}
			fmt.Fprintf(os.Stderr, "growth: %s %d sessions, %d messages: wall %s, CPU %s, peak %d MB, disk %d MB\n",
				engine, r.Sessions, r.Messages, r.Wall.Round(time.Millisecond), r.CPU.Round(time.Millisecond), r.PeakRSS>>20, r.Disk>>20)
			rows = append(rows, r)
		}
		for _, p := range o.peers {
			fmt.Fprintf(os.Stderr, "growth: importing %d sessions with %s\n", n, p.name)
			pr, err := runPeer(ctx, p, corpus, corpus, filepath.Join(o.dir, "no-codex"), o.dir)
			if err != nil {
				return fmt.Errorf("%s, %d sessions: %w", p.name, n, err)
			}
			fmt.Fprintf(os.Stderr, "growth: %s %d sessions: wall %s, CPU %s, peak %d MB, disk %d MB\n",
				p.name, pr.Sessions, pr.Wall.Round(time.Millisecond), pr.CPU.Round(time.Millisecond), pr.PeakRSS>>20, pr.Disk>>20)
			rows = append(rows, growthRow{Engine: p.name, Sessions: pr.Sessions, Messages: pr.Messages, Wall: pr.Wall, CPU: pr.CPU, PeakRSS: pr.PeakRSS, Disk: pr.Disk})
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Import growth\n\n")
	fmt.Fprintf(&b, "| engine | sessions | messages | wall | CPU (the importing process) | peak RSS | disk | wall ratio to the size before | CPU ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, r := range rows {
		ratio, cpuRatio := "", ""
		for j := i - 1; j >= 0; j-- {
			if rows[j].Engine == r.Engine {
				ratio = fmt.Sprintf("%.2f× for %.0f× the sessions", r.Wall.Seconds()/rows[j].Wall.Seconds(), float64(r.Sessions)/float64(rows[j].Sessions))
				cpuRatio = fmt.Sprintf("%.2f×", r.CPU.Seconds()/rows[j].CPU.Seconds())
				break
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f s | %.2f s | %d MB | %d MB | %s | %s |\n", r.Engine, r.Sessions, r.Messages,
			r.Wall.Seconds(), r.CPU.Seconds(), r.PeakRSS>>20, r.Disk>>20, ratio, cpuRatio)
	}
	fmt.Fprint(w, b.String())
	if o.out != "" {
		return os.WriteFile(o.out, []byte(b.String()), 0o600)
	}
	return nil
}

// growthChild runs one import in a child process (growthImport) and
// returns its row with the child's CPU time and peak memory.
func growthChild(ctx context.Context, self, engine, corpus string, o growthOptions, n int) (growthRow, error) {
	store := filepath.Join(o.dir, fmt.Sprintf("growth-%d-%d.db", n, time.Now().UnixNano()))
	if engine == "postgres" {
		// Of this process too: another run on the same server (the
		// machine is shared) drops and makes a schema of its own.
		store = fmt.Sprintf("loombench_growth_%d_%d", n, os.Getpid())
	}
	defer func() {
		if engine == "sqlite" {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(store + suffix)
			}
		}
	}()
	cmd := exec.CommandContext(ctx, self, "-import-growth-child", corpus, "-import-growth-engine", engine,
		"-import-growth-store", store, "-postgres", o.server)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return growthRow{}, err
	}
	var r growthRow
	if err := json.Unmarshal(out, &r); err != nil {
		return growthRow{}, fmt.Errorf("child said %q: %w", out, err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.PeakRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r, nil
}

// growthImport is the child: it imports corpus into a fresh store of
// engine at store (a file, or a schema of server), and writes its row
// as JSON to stdout.
func growthImport(ctx context.Context, engine, corpus, store, server string, keep bool) error {
	// The wall time is the store's opening and closing too (a closing
	// SQLite store copies what its WAL holds into its file), as a user
	// timing the command would see it.
	t0 := time.Now()
	var st interface {
		loom.Engine
		Close() error
	}
	var disk func() (int64, error)
	switch engine {
	case "sqlite":
		s, err := sqlite.Open(ctx, store)
		if err != nil {
			return err
		}
		st = s
		disk = func() (int64, error) {
			var total int64
			for _, suffix := range []string{"", "-wal"} {
				if fi, err := os.Stat(store + suffix); err == nil {
					total += fi.Size()
				}
			}
			return total, nil
		}
	case "postgres":
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		schema := pgx.Identifier{store}.Sanitize()
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE; CREATE SCHEMA `+schema); err != nil {
			return err
		}
		if !keep {
			defer conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+schema+` CASCADE`)
		}
		t0 = time.Now() // the schema's making is the benchmark's, not the import's
		u, err := schemaURL(server, store)
		if err != nil {
			return err
		}
		s, err := postgres.Open(ctx, u)
		if err != nil {
			return err
		}
		st = s
		disk = func() (int64, error) {
			var total int64
			err := conn.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, relname))), 0)::bigint
				FROM pg_stat_user_tables WHERE schemaname = $1`, store).Scan(&total)
			return total, err
		}
	default:
		return fmt.Errorf("-import-growth-engine %q: sqlite or postgres", engine)
	}
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	im := &importer.Importer{Store: st, UserID: "bench"}
	targets := []importer.Target{{Format: claudecode.Format{}, Roots: []string{corpus}, Explicit: true}}
	if _, err := os.Stat(filepath.Join(corpus, ".claude")); err == nil { // a home, as -import-history lays it
		none := func(string) string { return "" }
		targets = []importer.Target{
			{Format: claudecode.Format{}, Roots: claudecode.Format{}.Roots(none, corpus), Explicit: true},
			{Format: codex.Format{}, Roots: codex.Format{}.Roots(none, corpus)[:1], Explicit: true},
		}
	}
	rep, err := im.Run(ctx, targets)
	if err != nil {
		return err
	}
	closed = true
	if err := st.Close(); err != nil {
		return err
	}
	r := growthRow{Engine: engine, Wall: time.Since(t0)}
	for _, t := range rep.Tools {
		r.Sessions += t.SessionsNew
		r.Messages += t.MessagesAdded
		if t.ProblemCount > 0 {
			return fmt.Errorf("%d problems importing %s", t.ProblemCount, corpus)
		}
	}
	if r.Disk, err = disk(); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// growthWords are the words of the generated prompts and replies.
var growthWords = strings.Fields(`the of and to session message agent model tool search index store write read fork
	project memory context token cost usage append stream reply user summary resume picker terminal server
	query engine table column value result error status running completed process lock host file function config
	database request response build test deploy review branch commit merge change update package module import`)

// writeGrowthCorpus writes n Claude Code sessions under dir, as Claude
// Code keeps them (a directory per project, a file per session), over 50
// projects: each of 2 to 5 turns of a prompt, a reply that reads a file
// with a tool call, the call's result and a closing reply, over the 90
// days before 2026-11-01. The same n makes the same files.
func writeGrowthCorpus(dir string, n int) error {
	rng := rand.New(rand.NewPCG(uint64(n), 108))
	text := func(words int) string {
		var b strings.Builder
		for i := range words {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(growthWords[rng.IntN(len(growthWords))])
		}
		return b.String()
	}
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff)
	}
	start := time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC)
	for i := range n {
		project := fmt.Sprintf("project%02d", i%50)
		cwd := "/home/dev/projects/" + project
		sid := uuid()
		at := start.Add(time.Duration(i) * 90 * 24 * time.Hour / time.Duration(n))
		var lines []string
		parent := "null"
		line := func(typ string, message any) {
			id := uuid()
			m, _ := json.Marshal(message)
			lines = append(lines, fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":%q,"sessionId":%q,"version":"2.1.39","gitBranch":"main","type":%q,"message":%s,"uuid":%q,"timestamp":%q}`,
				parent, cwd, sid, typ, m, id, at.Format("2006-01-02T15:04:05.000Z")))
			parent = `"` + id + `"`
			at = at.Add(time.Duration(1+rng.IntN(20)) * time.Second)
		}
		usage := map[string]int{"input_tokens": 10 + rng.IntN(500), "output_tokens": 20 + rng.IntN(400), "cache_read_input_tokens": rng.IntN(20000)}
		for range 2 + rng.IntN(4) {
			line("user", map[string]any{"role": "user", "content": text(5 + rng.IntN(25))})
			call := "toolu_" + strings.ReplaceAll(uuid(), "-", "")[:24]
			path := fmt.Sprintf("%s/%s.go", cwd, growthWords[rng.IntN(len(growthWords))])
			line("assistant", map[string]any{"model": "claude-sonnet-4-5", "id": "msg_" + call[6:], "type": "message", "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": text(10 + rng.IntN(40))},
					map[string]any{"type": "tool_use", "id": call, "name": "Read", "input": map[string]string{"file_path": path}}},
				"stop_reason": "tool_use", "usage": usage})
			line("user", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": call, "content": text(30 + rng.IntN(120))}}})
			line("assistant", map[string]any{"model": "claude-sonnet-4-5", "id": "msg_" + uuid(), "type": "message", "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": text(10 + rng.IntN(60))}}, "stop_reason": "end_turn", "usage": usage})
		}
		p := filepath.Join(dir, "-home-dev-projects-"+project, sid+".jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "done"), nil, 0o600)
}
