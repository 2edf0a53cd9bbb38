package clitest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// RaceProblems gathers what the processes of a race test report.
type RaceProblems struct {
	mu   sync.Mutex
	list []string
}

func (p *RaceProblems) Add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, s)
}

// Check fails the test with each problem gathered.
func (p *RaceProblems) Check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.list {
		t.Error(s)
	}
}

// raceWatch is `loom session import --from TOOL --watch --json` running
// beside the hooks of a race test.
type raceWatch struct {
	cmd     *exec.Cmd
	stderr  strings.Builder
	stopped bool
	// Watching is closed with --watch's first report: its first pass is
	// done and it watches. Interrupted before, it stops that pass, which
	// it says ("interrupted", exit 1).
	Watching chan struct{}
	// reported is closed once --watch's output has ended.
	reported chan struct{}
}

// StartRaceWatch starts --watch on tool's sessions; every problem its
// reports name goes to problems.
func (fx *Fixture) StartRaceWatch(t *testing.T, tool string, problems *RaceProblems) *raceWatch {
	t.Helper()
	w := &raceWatch{Watching: make(chan struct{}), reported: make(chan struct{})}
	w.cmd = exec.Command(LoomBinary(t), "session", "import", "--from", tool, "--watch", "--json")
	w.cmd.Dir, w.cmd.Env = fx.Project, fx.BinEnv()
	stdout, _ := w.cmd.StdoutPipe()
	w.cmd.Stderr = &w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !w.stopped {
			w.cmd.Process.Kill()
			w.cmd.Wait()
		}
	})
	go func() {
		defer close(w.reported)
		dec := json.NewDecoder(bufio.NewReader(stdout))
		first := true
		for {
			var rep importer.Report
			if dec.Decode(&rep) != nil {
				if first {
					close(w.Watching)
				}
				return
			}
			if first {
				close(w.Watching)
				first = false
			}
			for _, tr := range rep.Tools {
				for _, p := range tr.Problems {
					problems.Add("watch: " + p.String())
				}
			}
		}
	}()
	return w
}

// Stop interrupts --watch once its first pass has reported, and fails
// the test unless it exits 0.
func (w *raceWatch) Stop(t *testing.T) {
	t.Helper()
	<-w.Watching
	w.cmd.Process.Signal(os.Interrupt)
	err := w.cmd.Wait()
	w.stopped = true
	<-w.reported
	if err != nil {
		t.Errorf("--watch: %v: %s", err, w.stderr.String())
	}
}

// RaceSession is every message of the session keyed key once a race
// test's processes are done. The session is the only one listed (no
// fork was made), holds each message once, and a plain import of tool
// afterwards adds nothing.
func (fx *Fixture) RaceSession(t *testing.T, tool, key string) []*loom.Message {
	t.Helper()
	rep := ImportReport(t, fx.MustExec(t, "session", "import", "--from", tool, "--json"))
	if tr := ToolReport(t, rep, tool); tr.MessagesAdded != 0 || tr.SessionsNew != 0 {
		t.Errorf("a plain import afterwards: %+v", tr)
	}
	var listed []*loom.Session
	if err := json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "--all-projects", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Key != key {
		for _, s := range listed {
			t.Logf("session %s key %s kind %s: %d messages", s.ID, s.Key, s.Kind, s.MessageCount)
		}
		t.Fatalf("%d sessions listed, want the one session, without forks", len(listed))
	}
	msgs := fx.ShowMessages(t, listed[0].ID)
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.ID] {
			t.Errorf("message %s stored twice", m.ID)
		}
		seen[m.ID] = true
	}
	return msgs
}
