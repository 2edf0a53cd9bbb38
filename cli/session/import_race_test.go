package session_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
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
	fx := clitest.NewEmptyFixture(t)
	dir := filepath.Join(fx.Home, ".claude", "projects", "-work-race")
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

	problems := &clitest.RaceProblems{}
	watch := fx.StartRaceWatch(t, "claude-code", problems)
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
				if r := fx.Exec(t, string(in), "session", "import", "--hook", "claude-code"); r.Code != 0 {
					problems.Add(fmt.Sprintf("hook: exit %d: %s", r.Code, r.Stderr))
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
	watch.Stop(t)
	problems.Check(t)

	msgs := fx.RaceSession(t, "claude-code", "claude-code:"+sid)
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
	fx := clitest.NewEmptyFixture(t)
	installAgentSessions(t, fx.Home)
	touchAll(t, fx.Home)
	var wg sync.WaitGroup
	results := make([]clitest.Result, 4)
	for i := range results {
		wg.Go(func() { results[i] = fx.Exec(t, "", "session", "import", "--from", "all", "--json") })
	}
	wg.Wait()
	for i, r := range results {
		if r.Code != 0 {
			t.Errorf("import %d: exit %d: %s", i+1, r.Code, r.Stderr)
		}
	}
	rep := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "all", "--json"))
	for _, tr := range rep.Tools {
		if tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.ToolsUpdated != 0 {
			t.Errorf("a plain import afterwards, %s: %+v", tr.Tool, tr)
		}
	}
	var listed []*loom.Session
	json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "--all-projects", "--json", "--limit", "0")), &listed)

	one := clitest.NewEmptyFixture(t)
	installAgentSessions(t, one.Home)
	touchAll(t, one.Home)
	one.MustExec(t, "session", "import", "--from", "all")
	var alone []*loom.Session
	json.Unmarshal([]byte(one.MustExec(t, "session", "list", "--all-projects", "--json", "--limit", "0")), &alone)
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
