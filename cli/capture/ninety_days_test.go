package capture_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/capture"
	"github.com/loomhq/loom/cli/doctor"
	"github.com/loomhq/loom/internal/agentfiles"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// simDays is how long the simulation runs, and keep how long Claude
// Code and Gemini CLI keep a session by default.
const (
	simDays = 90
	keep    = 30 * 24 * time.Hour
)

// simFile is a session file the simulation wrote: its agent, where, and
// the (virtual) time it was last written.
type simFile struct {
	agent, path string
	written     time.Time
	deleted     int // the day it was deleted; -1 while it is there
}

// sim is ninety days of three agents writing a session a day each,
// into a home directory, on a virtual clock that ends yesterday: day d
// is start + d days. Every file written is also copied to an archive
// that nothing deletes.
type sim struct {
	t       *testing.T
	home    string
	archive string
	start   time.Time
	files   []*simFile
	samples map[string][][]byte
}

func newSim(t *testing.T, home string) *sim {
	s := &sim{t: t, home: home, archive: t.TempDir(), start: time.Now().Add(-simDays * 24 * time.Hour).Truncate(time.Second),
		samples: map[string][][]byte{}}
	for agent, names := range map[string][]string{
		"claude-code": {"claude-code/spotter/short.jsonl", "claude-code/spotter/tool_heavy.jsonl"},
		"codex":       {"codex/vibecodingtracker-codex.jsonl"},
		"gemini":      {"gemini/vibecodingtracker-gemini.jsonl"},
	} {
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(clitest.Samples, n))
			if err != nil {
				t.Fatal(err)
			}
			s.samples[agent] = append(s.samples[agent], b)
		}
	}
	return s
}

func (s *sim) day(d int) time.Time { return s.start.Add(time.Duration(d) * 24 * time.Hour) }

// write writes day d's sessions: one of each agent, as each names it,
// written at the day's time, in home and in the archive.
func (s *sim) write(d int) {
	at := s.day(d).Add(time.Duration(d%7) * time.Hour)
	for _, agent := range []string{"claude-code", "codex", "gemini"} {
		samples := s.samples[agent]
		data := samples[d%len(samples)]
		seed := fmt.Sprintf("%s-day%02d", agent, d)
		for _, base := range []string{s.home, s.archive} {
			var p string
			var err error
			switch agent {
			case "claude-code":
				p, err = agentfiles.ClaudeCode(filepath.Join(base, ".claude", "projects"), "-work-sim", data, seed, at)
			case "codex":
				p, err = agentfiles.Codex(filepath.Join(base, ".codex", "sessions"), data, seed, at)
			case "gemini":
				p, err = agentfiles.Gemini(filepath.Join(base, ".gemini", "tmp", "sim", "chats"), data, seed, at)
			}
			if err != nil {
				s.t.Fatal(err)
			}
			if base == s.home {
				s.files = append(s.files, &simFile{agent: agent, path: p, written: at, deleted: -1})
			}
		}
	}
}

// expire deletes what each agent's own rule deletes on day d: Claude
// Code a file last written more than 30 days before (by its time),
// Gemini CLI a chat last updated more than 30 days before (the
// simulation writes each chat once, its lastUpdated its time); Codex
// deletes none. It returns the files deleted.
func (s *sim) expire(d int) []*simFile {
	now := s.day(d)
	var gone []*simFile
	for _, f := range s.files {
		if f.deleted >= 0 || f.agent == "codex" || !f.written.Before(now.Add(-keep)) {
			continue
		}
		if err := os.Remove(f.path); err != nil {
			s.t.Fatal(err)
		}
		f.deleted = d
		gone = append(gone, f)
	}
	return gone
}

// TestNinetyDaysWithCapture: with loom capture running (the real
// process), ninety days of Claude Code, Codex and Gemini CLI sessions,
// written a day at a time and deleted by each agent's own rule, leave
// loom holding every session and every message: what one import of
// every file ever written (an archive nothing deleted) holds.
func TestNinetyDaysWithCapture(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	s := newSim(t, fx.Home)
	var out strings.Builder
	cmd := captureCmd(t, fx)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	deleted := 0
	for d := range simDays {
		s.write(d)
		// The day's files captured (every agent caught up) before the
		// agents delete anything.
		waitStatus(t, fx, nil, &out, fmt.Sprintf("caught up on day %d", d), func(st capture.Status) bool {
			if !st.Running {
				return false
			}
			for _, a := range []string{"claude-code", "codex", "gemini"} {
				if ag := agent(st, a); ag == nil || ag.Pending > 0 || ag.Sessions == 0 {
					return false
				}
			}
			return true
		})
		deleted += len(s.expire(d))
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := <-done; err != nil {
		t.Fatalf("capture ended with %v:\n%s", err, out.String())
	}

	clean := clitest.NewEmptyFixture(t)
	for _, a := range []struct{ tool, dir string }{{"claude-code", ".claude/projects"}, {"codex", ".codex/sessions"}, {"gemini", ".gemini"}} {
		c := exec.Command(clitest.LoomBinary(t), "session", "import", "--from", a.tool, filepath.Join(s.archive, a.dir))
		c.Dir, c.Env = clean.Project, clean.BinEnv()
		if r := clitest.ExecCmd(t, c, ""); r.Code != 0 {
			t.Fatalf("import of the archive: exit %d: %s", r.Code, r.Stderr)
		}
	}
	want, got := clitest.StoreView(t, clean), clitest.StoreView(t, fx)
	if len(want) != 3*simDays {
		t.Fatalf("the archive holds %d sessions; want %d", len(want), 3*simDays)
	}
	if !slices.Equal(got, want) {
		lost := 0
		for _, w := range want {
			if !slices.Contains(got, w) {
				lost++
			}
		}
		t.Fatalf("loom holds %d sessions, %d of the %d written not as written (lost or short)", len(got), lost, len(want))
	}
	sessions, messages := fx.SessionCount(t)
	t.Logf("90 days: %d sessions written, %d deleted by their agents; loom holds %d sessions, %d messages, none lost", len(s.files), deleted, sessions, messages)
}

// TestNinetyDaysWithoutCapture: with no capture, loom doctor (run each
// day on the day's clock) says capture is not running and names every
// session before its agent deletes it, on each of the seven days before
// (the first of them seven days ahead or more), as not held by loom.
func TestNinetyDaysWithoutCapture(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	s := newSim(t, fx.Home)
	named := map[string][]int{} // path → the days doctor named it
	deleted := 0
	for d := range simDays {
		s.write(d)
		now := s.day(d).Add(23 * time.Hour) // late on the day, after its writes
		r := fx.RunWith(t, clitest.RunOpts{Before: func(f *cli.Factory) {
			clitest.AllFormats(f)
			f.Now = func() time.Time { return now }
		}}, "doctor", "--json")
		if r.Code != 0 {
			t.Fatalf("day %d: doctor: exit %d: %s", d, r.Code, r.Stderr)
		}
		rep := clitest.DecodeJSON[doctor.Report](t, r.Stdout)
		if rep.Capture.Running {
			t.Fatalf("day %d: doctor says capture runs: %s", d, rep.Capture.Why)
		}
		if rep.Unheld != rep.AtRisk {
			t.Fatalf("day %d: %d of %d at risk said held, with nothing imported", d, rep.AtRisk-rep.Unheld, rep.AtRisk)
		}
		for _, a := range rep.Agents {
			for _, x := range a.AtRisk {
				named[x.Path] = append(named[x.Path], d)
			}
		}
		// The agents delete early next day, by their rule.
		for _, f := range s.expire(d + 1) {
			deleted++
			days := named[f.path]
			if len(days) == 0 || days[0] > f.deleted-7 || len(days) != f.deleted-days[0] {
				t.Errorf("%s %s, deleted on day %d, was named by doctor on days %v; want every day from day %d or earlier", f.agent, filepath.Base(f.path), f.deleted, days, f.deleted-7)
			}
		}
	}
	if deleted == 0 {
		t.Fatal("no session was deleted")
	}
	for _, f := range s.files {
		if f.agent == "codex" && len(named[f.path]) > 0 {
			t.Errorf("a Codex rollout was named at risk: %s", f.path)
		}
	}
	t.Logf("90 days: %d sessions written, %d deleted by their agents, each named by loom doctor at least 7 days before", len(s.files), deleted)
}
