package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Claude Code hooks (2 and 4 of them, each run again and again as the
// session grows) and a --watch import one growing session file at once:
// every process exits 0 without a problem, the session holds every line
// once, no fork is made, and a plain import afterwards adds nothing.
func TestImportHooksAndWatchRace(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { hooksAndWatchRace(t, n) })
	}
}

func hooksAndWatchRace(t *testing.T, hooks int) {
	const (
		sid   = "5c2e8f1a-7b3d-4e9a-8c1f-2d6b0a9e4f37"
		turns = 30
	)
	fx := newEmptyFixture(t)
	dir := filepath.Join(fx.home, ".claude", "projects", "-work-race")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, sid+".jsonl")
	parent := "null"
	turn := func(i int) {
		u := fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i)
		a := fmt.Sprintf("00000000-0000-4000-8000-%012d", 2*i+1)
		at := time.Date(2026, 5, 18, 14, i, 0, 0, time.UTC)
		common := `"isSidechain":false,"userType":"external","cwd":"/work/race","sessionId":"` + sid + `","version":"2.1.62"`
		lines := `{"parentUuid":` + parent + `,` + common + `,"type":"user","message":{"role":"user","content":"cc prompt ` + fmt.Sprint(i) + `"},"uuid":"` + u + `","timestamp":"` + at.Format(time.RFC3339Nano) + `"}` + "\n" +
			`{"parentUuid":"` + u + `",` + common + `,"type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_` + fmt.Sprint(i) + `","type":"message","role":"assistant","content":[{"type":"text","text":"cc reply ` + fmt.Sprint(i) + `"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":5}},"uuid":"` + a + `","timestamp":"` + at.Add(time.Second).Format(time.RFC3339Nano) + `"}` + "\n"
		f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteString(lines)
		f.Close()
		parent = `"` + a + `"`
	}
	turn(1)

	problems := &raceProblems{}
	watch := fx.startRaceWatch(t, "claude-code", problems)
	in, _ := json.Marshal(map[string]any{"session_id": sid, "transcript_path": file, "cwd": "/work/race", "hook_event_name": "Stop"})
	written := make(chan struct{})
	var wg sync.WaitGroup
	for range hooks {
		wg.Go(func() {
			for done := false; !done; {
				select {
				case <-written:
					done = true
				default:
				}
				if r := fx.exec(t, string(in), "session", "import", "--hook", "claude-code"); r.code != 0 {
					problems.add(fmt.Sprintf("hook: exit %d: %s", r.code, r.stderr))
				}
			}
		})
	}
	for i := 2; i <= turns; i++ {
		turn(i)
		time.Sleep(3 * time.Millisecond) // the tool's pace, not a wait for anything
	}
	close(written)
	wg.Wait()
	watch.stop(t)
	problems.check(t)

	msgs := fx.raceSession(t, "claude-code", "claude-code:"+sid)
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text())
	}
	var want []string
	for i := 1; i <= turns; i++ {
		want = append(want, fmt.Sprintf("cc prompt %d", i), fmt.Sprintf("cc reply %d", i))
	}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("the session holds %d messages:\n%q\nwant\n%q", len(texts), texts, want)
	}
}

// Four `loom session import --from all` at once over every tool's
// sessions all exit 0, and store what one of them alone stores.
func TestImportFromAllFourAtOnce(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	installAgentSessions(t, fx.home)
	touchAll(t, fx.home)
	var wg sync.WaitGroup
	results := make([]result, 4)
	for i := range results {
		wg.Go(func() { results[i] = fx.exec(t, "", "session", "import", "--from", "all", "--json") })
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("import %d: exit %d: %s", i+1, r.code, r.stderr)
		}
	}
	rep := importReport(t, fx.mustExec(t, "session", "import", "--from", "all", "--json"))
	for _, tr := range rep.Tools {
		if tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.ToolsUpdated != 0 {
			t.Errorf("a plain import afterwards, %s: %+v", tr.Tool, tr)
		}
	}
	var listed []*loom.Session
	json.Unmarshal([]byte(fx.mustExec(t, "session", "list", "--all-projects", "--json", "--limit", "0")), &listed)

	one := newEmptyFixture(t)
	installAgentSessions(t, one.home)
	touchAll(t, one.home)
	one.mustExec(t, "session", "import", "--from", "all")
	var alone []*loom.Session
	json.Unmarshal([]byte(one.mustExec(t, "session", "list", "--all-projects", "--json", "--limit", "0")), &alone)
	if len(listed) != len(alone) || len(alone) == 0 {
		t.Errorf("%d sessions listed after four imports at once, %d after one alone", len(listed), len(alone))
	}
	count := func(ss []*loom.Session) (n int) {
		for _, s := range ss {
			n += s.MessageCount
		}
		return n
	}
	if count(listed) != count(alone) {
		t.Errorf("%d messages after four imports at once, %d after one alone", count(listed), count(alone))
	}
}

// raceProblems gathers what the processes of a race test report.
type raceProblems struct {
	mu   sync.Mutex
	list []string
}

func (p *raceProblems) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, s)
}

// check fails the test with each problem gathered.
func (p *raceProblems) check(t *testing.T) {
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
	// watching is closed with --watch's first report: its first pass is
	// done and it watches. Interrupted before, it stops that pass, which
	// it says ("interrupted", exit 1).
	watching chan struct{}
	// reported is closed once --watch's output has ended.
	reported chan struct{}
}

// startRaceWatch starts --watch on tool's sessions; every problem its
// reports name goes to problems.
func (fx *fixture) startRaceWatch(t *testing.T, tool string, problems *raceProblems) *raceWatch {
	t.Helper()
	w := &raceWatch{watching: make(chan struct{}), reported: make(chan struct{})}
	w.cmd = exec.Command(loomBinary(t), "session", "import", "--from", tool, "--watch", "--json")
	w.cmd.Dir, w.cmd.Env = fx.project, fx.binEnv()
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
					close(w.watching)
				}
				return
			}
			if first {
				close(w.watching)
				first = false
			}
			for _, tr := range rep.Tools {
				for _, p := range tr.Problems {
					problems.add("watch: " + p.String())
				}
			}
		}
	}()
	return w
}

// stop interrupts --watch once its first pass has reported, and fails
// the test unless it exits 0.
func (w *raceWatch) stop(t *testing.T) {
	t.Helper()
	<-w.watching
	w.cmd.Process.Signal(os.Interrupt)
	err := w.cmd.Wait()
	w.stopped = true
	<-w.reported
	if err != nil {
		t.Errorf("--watch: %v: %s", err, w.stderr.String())
	}
}

// raceSession is every message of the session keyed key once a race
// test's processes are done. The session is the only one listed (no
// fork was made), holds each message once, and a plain import of tool
// afterwards adds nothing.
func (fx *fixture) raceSession(t *testing.T, tool, key string) []*loom.Message {
	t.Helper()
	rep := importReport(t, fx.mustExec(t, "session", "import", "--from", tool, "--json"))
	if tr := toolReport(t, rep, tool); tr.MessagesAdded != 0 || tr.SessionsNew != 0 {
		t.Errorf("a plain import afterwards: %+v", tr)
	}
	var listed []*loom.Session
	if err := json.Unmarshal([]byte(fx.mustExec(t, "session", "list", "--all-projects", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Key != key {
		for _, s := range listed {
			t.Logf("session %s key %s kind %s: %d messages", s.ID, s.Key, s.Kind, s.MessageCount)
		}
		t.Fatalf("%d sessions listed, want the one session, without forks", len(listed))
	}
	msgs := fx.showMessages(t, listed[0].ID)
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.ID] {
			t.Errorf("message %s stored twice", m.ID)
		}
		seen[m.ID] = true
	}
	return msgs
}
