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

	watch := exec.Command(loomBinary(t), "session", "import", "--from", "claude-code", "--watch", "--json")
	watch.Dir, watch.Env = fx.project, fx.binEnv()
	stdout, _ := watch.StdoutPipe()
	var watchErr strings.Builder
	watch.Stderr = &watchErr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			watch.Process.Kill()
			watch.Wait()
		}
	})
	problems := make(chan string, 100)
	reported := make(chan struct{})
	// watching is closed with --watch's first report: its first pass is
	// done and it watches. Interrupted before, it stops that pass, which
	// it says ("interrupted", exit 1).
	watching := make(chan struct{})
	go func() {
		defer close(reported)
		dec := json.NewDecoder(bufio.NewReader(stdout))
		first := true
		for {
			var rep importer.Report
			if dec.Decode(&rep) != nil {
				if first {
					close(watching)
				}
				return
			}
			if first {
				close(watching)
				first = false
			}
			for _, tr := range rep.Tools {
				for _, p := range tr.Problems {
					problems <- "watch: " + p.String()
				}
			}
		}
	}()

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
					problems <- fmt.Sprintf("hook: exit %d: %s", r.code, r.stderr)
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
	<-watching
	watch.Process.Signal(os.Interrupt)
	err := watch.Wait()
	stopped = true
	<-reported
	if err != nil {
		t.Errorf("--watch: %v: %s", err, watchErr.String())
	}
	close(problems)
	for p := range problems {
		t.Error(p)
	}

	rep := importReport(t, fx.mustExec(t, "session", "import", "--from", "claude-code", "--json"))
	if tr := toolReport(t, rep, "claude-code"); tr.MessagesAdded != 0 || tr.SessionsNew != 0 {
		t.Errorf("a plain import afterwards: %+v", tr)
	}
	var listed []*loom.Session
	if err := json.Unmarshal([]byte(fx.mustExec(t, "session", "list", "--all-projects", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].Key != "claude-code:"+sid {
		for _, s := range listed {
			t.Logf("session %s key %s kind %s: %d messages", s.ID, s.Key, s.Kind, s.MessageCount)
		}
		t.Fatalf("%d sessions listed, want the one session, without forks", len(listed))
	}
	msgs := fx.showMessages(t, listed[0].ID)
	seen := map[string]bool{}
	var texts []string
	for _, m := range msgs {
		if seen[m.ID] {
			t.Errorf("message %s stored twice", m.ID)
		}
		seen[m.ID] = true
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
