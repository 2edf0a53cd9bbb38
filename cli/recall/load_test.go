package recall_test

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
)

// loadPrompts are asked of real Claude Code sessions (testdata's
// spotter project) with the CPU busy.
var loadPrompts = []string{
	"how do session start hooks print their output",
	"why was the task still blocked after it was closed",
	"start the phoenix server in the background",
	"which hook events does claude code have",
}

// nowhere is a prompt no session holds a word of.
const nowhere = "qxzvj wkpfq"

// With every core kept busy by spinning processes, loom search, loom
// recall and the recall hook never give messages that are not hits: a
// search gives its hits in time or, out of time, the first of them
// (those of the tiers that ended in time) marked partial; a recall
// gives turns of its hits only; and the hook, as installed (its
// SessionStart hook starting a warm recall) with no capture running,
// and answered by a running capture, gives context within its budget
// in at least 9 of 10 calls.
//
// What is a hit is found first, before the CPU is made busy. The hook
// alone ([recall] warm = false, no capture) is given the median of its
// unbounded times (counted from before its process starts) as its
// budget, so that about half its calls must answer with what they have
// by then; how many did is logged, not held to, since on a test machine
// loaded by the other tests it varies from run to run. A warm hook is
// given the default budget (100 ms), or twice the slowest of three
// unbounded calls when this machine is slower than that now (measured
// again once if ten calls miss it, a machine's load changing from
// second to second): what it tests is the hook, not the machine's speed.
func TestSearchAndRecallUnderLoad(t *testing.T) {
	clitest.SkipOnPostgres(t, "the busy CPU once is enough: it runs in the SQLite pass")
	fx := clitest.NewEmptyFixture(t)
	// Real sessions, recorded in the fixture's project.
	src := filepath.Join("..", "..", "testdata", "agent-sessions", "claude-code", "spotter")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		b = []byte(strings.ReplaceAll(string(b), "/home/USER/projects/spotter-worktrees/spotter-gqc", fx.Project))
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	fx.MustExec(t, "session", "import", "--from", "claude-code", dst)
	fx.MustExec(t, "recall", "enable")

	type hit struct {
		MessageID string `json:"message_id"`
		Tier      string `json:"tier"`
		Partial   bool   `json:"partial"`
	}
	search := func(prompt string) []hit {
		t.Helper()
		r := fx.Exec(t, "", "search", "--json", prompt)
		if r.Code != 0 {
			// Out of time before any hit (its first tier's, or every
			// tier's): refused, which is no wrong answer.
			if strings.Contains(r.Stderr, "had ranked any hit") {
				return nil
			}
			t.Fatalf("search %q: exit %d, %s", prompt, r.Code, r.Stderr)
		}
		var hits []hit
		if err := json.Unmarshal([]byte(r.Stdout), &hits); err != nil {
			t.Fatalf("search %q: %v\n%s", prompt, err, r.Stdout)
		}
		return hits
	}
	recallOf := func(prompt string) recall.Result {
		t.Helper()
		r := fx.Exec(t, "", "recall", "--json", "--tokens", "100000", prompt)
		var res recall.Result
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 {
			t.Fatalf("recall %q: exit %d, %v\n%s%s", prompt, r.Code, err, r.Stdout, r.Stderr)
		}
		return res
	}
	// The hits, found before the CPU is busy: a search that was itself
	// out of time is asked again.
	hits := map[string][]hit{}
	turns := map[string]recall.Result{}
	for _, p := range loadPrompts {
		for try := 0; ; try++ {
			h, res := search(p), recallOf(p)
			if len(h) > 0 && !h[0].Partial && !res.Partial {
				hits[p], turns[p] = h, res
				break
			}
			if try == 5 {
				t.Skipf("the machine is too busy to find what %q finds in time, even before the CPU is made busy", p)
			}
		}
		if len(turns[p].Turns) == 0 {
			t.Fatalf("recall %q found nothing in the real sessions", p)
		}
	}

	// Every core busy, twice over.
	for range 2 * runtime.NumCPU() {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}

	partial := 0
	for _, p := range loadPrompts {
		got := search(p)
		want := hits[p]
		if len(got) == 0 {
			partial++
			continue
		}
		if got[0].Partial {
			partial++
			if len(got) > len(want) {
				t.Fatalf("search %q out of time gave %d hits, more than its %d", p, len(got), len(want))
			}
			want = want[:len(got)]
		}
		for i := range got {
			if got[i].MessageID != want[i].MessageID || got[i].Tier != want[i].Tier || got[i].Partial != got[0].Partial {
				t.Fatalf("search %q with the CPU busy: hit %d is %+v, want %+v (of %+v)", p, i, got[i], want[i], want)
			}
		}
		res := recallOf(p)
		if res.Partial {
			partial++
		}
		for _, tr := range res.Turns {
			if !slices.ContainsFunc(turns[p].Turns, func(w recall.Turn) bool { return w.SessionID == tr.SessionID && w.Seq == tr.Seq }) {
				t.Fatalf("recall %q with the CPU busy gave a turn that is not one of its hits: %+v", p, tr)
			}
		}
	}
	t.Logf("%d of %d searches and recalls with the CPU busy ran out of time", partial, 2*len(loadPrompts))

	sock, _ := warmSocket(t, fx)

	// hook runs the hook as an agent does, for event, with budget and
	// the variables in extra.
	hook := func(event, prompt, budget string, extra ...string) (string, time.Duration) {
		t.Helper()
		in := `{"session_id":"x","cwd":"` + fx.Project + `","hook_event_name":"` + event + `","prompt":"` + prompt + `"}`
		cmd := exec.Command(clitest.LoomBinary(t), "recall", "--hook", "claude-code")
		cmd.Env, cmd.Dir = append(fx.BinEnv(), extra...), fx.Project
		if budget != "" {
			cmd.Env = append(cmd.Env, "LOOM_RECALL_HOOK_TIME="+budget)
		}
		start := time.Now()
		r := clitest.ExecCmd(t, cmd, in)
		took := time.Since(start)
		if r.Code != 0 {
			t.Fatalf("hook: exit %d, %s", r.Code, r.Stderr)
		}
		if r.Stdout == "" {
			return "", took
		}
		var out struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("hook: %v\n%s", err, r.Stdout)
		}
		return out.HookSpecificOutput.AdditionalContext, took
	}
	// noWarm keeps a hook from starting a warm recall: the hook alone,
	// as with [recall] warm = false (as BinEnv has it; said here for
	// the reader).
	noWarm := "LOOM_RECALL_WARM=false"
	// How long the hook takes on this machine now, with no bound: to
	// find nothing, and to recall.
	median := func(prompt func(i int) string, extra ...string) []time.Duration {
		var took []time.Duration
		for i := range 3 {
			text, d := hook("UserPromptSubmit", prompt(i), "1m", extra...)
			if (text == "") != (prompt(i) == nowhere) {
				t.Fatalf("hook with no bound for %q: %q", prompt(i), text)
			}
			took = append(took, d)
		}
		slices.Sort(took)
		return took
	}
	// calls makes 10 calls of the hook with budget, and counts those
	// that answered, checking that each answer holds turns of the
	// prompt's hits only.
	calls := func(what string, budget time.Duration, extra ...string) int {
		t.Helper()
		answered := 0
		for i := range 10 {
			p := loadPrompts[i%len(loadPrompts)]
			text, d := hook("UserPromptSubmit", p, budget.String(), extra...)
			if text == "" {
				t.Logf("%s: hook %d gave nothing after %v", what, i, d)
				continue
			}
			answered++
			for _, line := range strings.Split(strings.TrimSpace(text), "\n")[1:] {
				if strings.HasPrefix(line, "(partial:") {
					// A partial answer's last line says so.
					continue
				}
				if !slices.ContainsFunc(turns[p].Turns, func(w recall.Turn) bool { return strings.Contains(line, "session "+w.SessionID) }) {
					t.Fatalf("%s: hook %q with the CPU busy gave a turn of no hit: %s", what, p, line)
				}
			}
		}
		return answered
	}
	// answering waits until a warm recall answers on the socket, or
	// ended is closed.
	answering := func(ended <-chan struct{}, why func() string) {
		t.Helper()
		for {
			if c, err := net.Dial("unix", sock); err == nil {
				c.Close()
				return
			}
			select {
			case <-ended:
				t.Fatal(why())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}

	// warmWithin holds a warm hook to the default budget (100 ms), or
	// twice the slowest of three unbounded calls when this machine,
	// now, takes longer than that: at least 9 of 10 calls answer. A
	// machine whose load changes between the measure and the calls
	// gets a second measure and ten more calls; both rounds failing
	// fails.
	warmWithin := func(what string, extra ...string) {
		t.Helper()
		var budget time.Duration
		within := 0
		for round := range 2 {
			unbounded := median(func(i int) string { return loadPrompts[i] }, extra...)
			budget = max(100*time.Millisecond, unbounded[2]*2)
			within = calls(what, budget, extra...)
			t.Logf("round %d, %s, with the CPU busy: the hook took %v with no bound; with a budget of %v it answered %d of 10 calls",
				round+1, what, unbounded, budget, within)
			if within >= 9 {
				return
			}
		}
		t.Fatalf("with the CPU busy (%s) and a budget of %v, the warm hook answered %d of 10 calls, want at least 9", what, budget, within)
	}

	// The hook alone ([recall] warm = false, no capture) does it all
	// itself: with the median of its unbounded times as its budget
	// about half the calls must answer with what they found by then.
	// How many did is logged: on a test machine loaded by the other
	// tests it varies from run to run.
	fixed := median(func(int) string { return nowhere }, noWarm)
	took := median(func(i int) string { return loadPrompts[i] }, noWarm)
	budget := max(took[1], 100*time.Millisecond)
	cold := calls("alone", budget, noWarm)
	t.Logf("with the CPU busy the hook alone took %v with no bound (%v finding nothing); with a budget of %v it answered %d of 10 calls", took, fixed, budget, cold)
	if pid := recall.Holder(sock); pid != 0 {
		t.Fatalf("with LOOM_RECALL_WARM=false a hook started a warm recall (pid %d)", pid)
	}

	// As installed, with no capture running: the session's first hook
	// (SessionStart) starts a warm recall in the background, and the
	// prompts' hooks that follow ask it, within warmWithin's budget.
	warmOn := "LOOM_RECALL_WARM=true"
	hook("SessionStart", "", "", warmOn)
	// Not a clock the test depends on: only how long before it says
	// that none started.
	none := make(chan struct{})
	defer time.AfterFunc(2*time.Minute, func() { close(none) }).Stop()
	answering(none, func() string { return "no warm recall answered two minutes after the SessionStart hook" })
	first := recall.Holder(sock)
	warmWithin("started by SessionStart", warmOn)
	// One warm recall all along, of this loom's home alone.
	if pid := recall.Holder(sock); pid != first || pid == 0 {
		t.Fatalf("the warm recall was pid %d, is now %d", first, pid)
	}
	if runtime.GOOS == "linux" {
		if n := warmRecalls(t, fx.Home); n != 1 {
			t.Fatalf("%d warm recalls run for one store, want 1", n)
		}
	}
	// Stopped, it ends cleanly: its socket removed, its lock released.
	if err := syscall.Kill(first, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for recall.Holder(sock) != 0 {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the warm recall a hook started, stopped, left its socket: %v", err)
	}

	// With the capture service running, its warm recall answers the
	// hook: the same turns, within the budget (docs/search.md has the
	// figures of a quiet machine with both cores spinning).
	capture := exec.Command(clitest.LoomBinary(t), "capture", "run", "--rescan", "1h")
	capture.Env, capture.Dir = fx.BinEnv(), fx.Project
	var capLog strings.Builder
	capture.Stderr = &capLog
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { capture.Wait(); close(ended) }()
	t.Cleanup(func() { capture.Process.Kill(); <-ended })
	answering(ended, func() string { return "loom capture run ended: " + capLog.String() })
	warmWithin("capture")
	if text, _ := hook("UserPromptSubmit", loadPrompts[0], "1m"); text == "" {
		t.Fatalf("with the capture's warm recall and no bound, the hook found nothing for %q", loadPrompts[0])
	}
	if pid := recall.Holder(sock); pid != capture.Process.Pid {
		t.Fatalf("the warm recall is pid %d, not the capture's %d", pid, capture.Process.Pid)
	}
}

// warmRecallPids are the processes of loom recall serve whose
// LOOM_HOME is home; none where processes cannot be listed (/proc).
func warmRecallPids(t *testing.T, home string) []int {
	t.Helper()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || !strings.HasSuffix(string(cmdline), "\x00recall\x00serve\x00") {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", p.Name(), "environ"))
		if err == nil && slices.Contains(strings.Split(string(environ), "\x00"), "LOOM_HOME="+home) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// warmRecalls counts the processes of loom recall serve whose LOOM_HOME
// is home.
func warmRecalls(t *testing.T, home string) int { return len(warmRecallPids(t, home)) }

// warmSocket is the socket of the warm recall of fx's store, and the
// store's URL; a warm recall a hook started there and the test did not
// stop is stopped when the test ends.
func warmSocket(t *testing.T, fx *clitest.Fixture) (sock, store string) {
	t.Helper()
	env := func(k string) string {
		for _, kv := range fx.BinEnv() {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	dirs, err := paths.Resolve(env)
	if err != nil {
		t.Fatal(err)
	}
	store = paths.DBURL("", env, dirs)
	sock = recall.WarmSocket(dirs.State, store)
	t.Cleanup(func() { stopWarmRecalls(t, fx.Home, sock) })
	return sock, store
}

// stopWarmRecalls stops the warm recalls of home that hooks started
// (those starting too, where their processes can be listed), and waits
// until they have ended: they would otherwise write in home while the
// test removes it.
func stopWarmRecalls(t *testing.T, home, sock string) {
	pids := warmRecallPids(t, home)
	if pid := recall.Holder(sock); pid > 0 && !slices.Contains(pids, pid) {
		pids = append(pids, pid)
	}
	none := make(chan struct{})
	defer time.AfterFunc(time.Minute, func() { close(none) }).Stop()
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
		for syscall.Kill(pid, 0) == nil {
			select {
			case <-none:
				t.Errorf("the warm recall of pid %d still runs a minute after SIGTERM", pid)
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}
