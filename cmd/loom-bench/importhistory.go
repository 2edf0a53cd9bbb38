package main

// A heavy user's history: some hundreds of megabytes of Claude Code and
// Codex files, made from the real sample files of -samples with fresh
// ids and laid out as each tool keeps them under a home directory, then
// imported by loom (a process of its own, into a fresh SQLite store) and
// by each peer of -import-peers, in turns, -import-runs times
// (docs/performance.md, "A heavy user's history beside the peers").

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// historyOptions is what the history run imports, and with what.
type historyOptions struct {
	mb      int    // the history's size
	samples string // the real sample files (testdata/agent-sessions)
	dir     string // where the history and the stores go
	runs    int
	peers   []importPeer
	out     string
}

// historyMain generates the history once (as history-<mb>/ under dir;
// delete it to make it again) and imports it -runs times with loom and
// each peer, the order turning at each run.
func historyMain(ctx context.Context, w io.Writer, o historyOptions) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	home := filepath.Join(o.dir, fmt.Sprintf("history-%d", o.mb))
	if _, err := os.Stat(filepath.Join(home, "done")); err != nil {
		fmt.Fprintf(os.Stderr, "history: writing about %d MB of Claude Code and Codex files in %s\n", o.mb, home)
		if err := os.RemoveAll(home); err != nil {
			return err
		}
		if err := writeHistory(o.samples, home, int64(o.mb)<<20); err != nil {
			return err
		}
	}
	files, size, subagents, codexFiles := historyCounts(home)
	type turn struct {
		name string
		run  func() (growthRow, error)
	}
	turns := []turn{{"loom", func() (growthRow, error) {
		return growthChild(ctx, self, "sqlite", home, growthOptions{dir: o.dir}, 0)
	}}}
	for _, p := range o.peers {
		turns = append(turns, turn{p.name, func() (growthRow, error) {
			r, err := runPeer(ctx, p, home, filepath.Join(home, ".claude", "projects"), filepath.Join(home, ".codex"), o.dir)
			return growthRow{Engine: r.Name, Sessions: r.Sessions, Messages: r.Messages, Wall: r.Wall, CPU: r.CPU, PeakRSS: r.PeakRSS, Disk: r.Disk}, err
		}})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## A heavy user's history beside the peers\n\n")
	fmt.Fprintf(&b, "History: %.0f MB in %d files (%d Claude Code sub-agent transcripts, %d Codex rollouts), made from %s.\n\n",
		float64(size)/(1<<20), files, subagents, codexFiles, o.samples)
	fmt.Fprintf(&b, "| run | tool | sessions | messages | wall | CPU | peak RSS | disk | wall / loom's |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for run := range o.runs {
		var rows []growthRow
		for i := range turns {
			t := turns[(i+run)%len(turns)]
			fmt.Fprintf(os.Stderr, "history: run %d, %s\n", run+1, t.name)
			r, err := t.run()
			if err != nil {
				return fmt.Errorf("run %d, %s: %w", run+1, t.name, err)
			}
			if t.name == "loom" {
				r.Engine = "loom"
			}
			fmt.Fprintf(os.Stderr, "history: %s: wall %s, CPU %s, peak %d MB\n", t.name, r.Wall.Round(time.Millisecond), r.CPU.Round(time.Millisecond), r.PeakRSS>>20)
			rows = append(rows, r)
		}
		var loomWall time.Duration
		for _, r := range rows {
			if r.Engine == "loom" {
				loomWall = r.Wall
			}
		}
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].Engine == "loom" && rows[j].Engine != "loom" })
		for _, r := range rows {
			msgs := ""
			if r.Messages > 0 {
				msgs = fmt.Sprint(r.Messages)
			}
			fmt.Fprintf(&b, "| %d | %s | %d | %s | %.2f s | %.2f s | %d MB | %d MB | %.2f |\n", run+1, r.Engine, r.Sessions, msgs,
				r.Wall.Seconds(), r.CPU.Seconds(), r.PeakRSS>>20, r.Disk>>20, r.Wall.Seconds()/loomWall.Seconds())
		}
	}
	fmt.Fprint(w, b.String())
	if o.out != "" {
		return os.WriteFile(o.out, []byte(b.String()), 0o600)
	}
	return nil
}

var (
	cwdRE         = regexp.MustCompile(`"cwd":"[^"]*"`)
	cwdTagRE      = regexp.MustCompile(`<cwd>[^<]*</cwd>`)
	sessionIDRE   = regexp.MustCompile(`"sessionId":"([0-9a-f-]{36})"`)
	codexMetaIDRE = regexp.MustCompile(`"type":"session_meta","payload":\{"id":"([0-9a-f-]{36})"`)
)

// writeHistory writes real-format Claude Code and Codex files under home
// (home/.claude/projects/<project>/<session>.jsonl with the sub-agents'
// <session>/subagents/agent-*.jsonl, home/.codex/sessions/YYYY/MM/DD/
// rollout-*.jsonl) until they hold at least size bytes. Every file is a
// copy of a sample of samples with every UUID in it replaced by a fresh
// one (the same throughout a session and its sub-agents and agent
// files) and its working directory set to one of 50 projects, so each
// copy is a session of its own. In each group of 13 Claude Code
// sessions one is the long 2.1.39 session with its two sub-agents, the
// other twelve the short ones (every eighth group, two of them the long
// 1.x sessions of the viewer's sample project, one with its two agent
// files), beside six Codex rollouts: the mix of a user whose few long
// sessions hold most of the bytes.
func writeHistory(samples, home string, size int64) error {
	read := func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(samples, rel)) }
	type sample struct {
		main      string
		agents    []string // files of its sub-agents (subagents/) or 1.x agent files
		oldAgents bool
	}
	long := sample{main: "claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl", agents: []string{
		"claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl",
		"claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl"}}
	short := []sample{{main: "claude-code/spotter/tool_heavy.jsonl"}, {main: "claude-code/spotter/short.jsonl"},
		{main: "claude-code/viewer-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"}}
	viewer := []sample{{main: "claude-code/viewer-sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"},
		{main: "claude-code/viewer-sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl", oldAgents: true, agents: []string{
			"claude-code/viewer-sample-project/agent-test-hash-123.jsonl", "claude-code/viewer-sample-project/agent-test-hash-456.jsonl"}}}
	codexSample, err := read("codex/vibecodingtracker-codex.jsonl")
	if err != nil {
		return err
	}
	var total int64
	file := 0
	write := func(p string, body []byte) error {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		total += int64(len(body))
		return os.WriteFile(p, body, 0o600)
	}
	copyOf := func(body []byte, fresh map[string]string, project string) []byte {
		s := uuidRE.ReplaceAllStringFunc(string(body), func(u string) string {
			if v, ok := fresh[u]; ok {
				return v
			}
			fresh[u] = loom.NewID()
			return fresh[u]
		})
		s = cwdRE.ReplaceAllString(s, `"cwd":"/home/dev/projects/`+project+`"`)
		s = cwdTagRE.ReplaceAllString(s, `<cwd>/home/dev/projects/`+project+`</cwd>`)
		return []byte(s)
	}
	claude := func(s sample) error {
		project := fmt.Sprintf("project%02d", file%50)
		file++
		dir := filepath.Join(home, ".claude", "projects", "-home-dev-projects-"+project)
		fresh := map[string]string{}
		body, err := read(s.main)
		if err != nil {
			return err
		}
		body = copyOf(body, fresh, project)
		m := sessionIDRE.FindSubmatch(body)
		if m == nil {
			return fmt.Errorf("%s: no sessionId", s.main)
		}
		sid := string(m[1])
		if err := write(filepath.Join(dir, sid+".jsonl"), body); err != nil {
			return err
		}
		for _, a := range s.agents {
			body, err := read(a)
			if err != nil {
				return err
			}
			body = copyOf(body, fresh, project)
			p := filepath.Join(dir, sid, "subagents", filepath.Base(a))
			if s.oldAgents { // Claude Code 1.x: agent-<id>.jsonl beside the sessions
				id := loom.NewID() // its random tail: the head is the time, the same for both
				p = filepath.Join(dir, "agent-"+id[len(id)-8:]+".jsonl")
			}
			if err := write(p, body); err != nil {
				return err
			}
		}
		return nil
	}
	for group := 0; total < size; group++ {
		if err := claude(long); err != nil {
			return err
		}
		for i := range 12 {
			s := short[i%len(short)]
			if group%8 == 7 && i < len(viewer) {
				s = viewer[i]
			}
			if err := claude(s); err != nil {
				return err
			}
		}
		for range 6 {
			project := fmt.Sprintf("project%02d", file%50)
			file++
			body := copyOf(codexSample, map[string]string{}, project)
			m := codexMetaIDRE.FindSubmatch(body)
			if m == nil {
				return fmt.Errorf("codex sample: no session_meta id")
			}
			p := filepath.Join(home, ".codex", "sessions", "2025", "09", "19", "rollout-2025-09-19T09-02-12-"+string(m[1])+".jsonl")
			if err := write(p, body); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(filepath.Join(home, "done"), nil, 0o600)
}

// historyCounts counts the history's files, bytes, sub-agent
// transcripts and Codex rollouts.
func historyCounts(home string) (files int, size int64, subagents, codex int) {
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		files++
		if fi, err := d.Info(); err == nil {
			size += fi.Size()
		}
		switch {
		case strings.Contains(p, string(filepath.Separator)+"subagents"+string(filepath.Separator)):
			subagents++
		case strings.Contains(p, string(filepath.Separator)+".codex"+string(filepath.Separator)):
			codex++
		}
		return nil
	})
	return
}
