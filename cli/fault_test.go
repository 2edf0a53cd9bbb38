package cli_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/internal/testkit/syncio"
	"github.com/loomhq/loom/openai/openaitest"
)

var faultLong = flag.Bool("fault.long", false, "run the fault-injection suite's long form (many trials of each fault)")

// trials is how many times a fault is injected: a few in CI, many with
// -fault.long.
func trials(short, long int) int {
	if *faultLong {
		return long
	}
	return short
}

// noCompaction keeps the fixture's sessions from being compacted, so a
// long run of turns sends the provider only the replies it scripts.
func noCompaction(t *testing.T, fx *clitest.Fixture) {
	t.Helper()
	os.MkdirAll(filepath.Join(fx.Home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(fx.Home, "config", "config.toml"), []byte("compact_after = 100000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// faultReplies is one turn that reads a file and answers in many small
// chunks: a kill can land before the prompt is stored, while the model
// streams, while the tool runs, between two model calls, or while the
// answer is written.
func faultReplies(n int) []openaitest.Reply {
	return []openaitest.Reply{
		{ToolCalls: []openaitest.ToolCall{{ID: fmt.Sprintf("call_%d", n), Name: "read_file", Args: `{"path":"notes.txt"}`}}, Delay: 3 * time.Millisecond},
		{Text: faultAnswer(n), Delay: 4 * time.Millisecond},
	}
}

func faultAnswer(n int) string {
	return fmt.Sprintf("answer %d: %s", n, strings.Repeat("the notes say forty-two; ", 12))
}

// checkSession checks what a killed turn may leave: seq without gaps,
// counters that match, every assistant text whole (one of the scripted
// answers, never a prefix), each prompt at most once and in order, and
// no tool part left pending.
func checkSession(t *testing.T, fx *clitest.AgentFixture, id string, answers map[string]bool) []*loom.Message {
	t.Helper()
	st := fx.OpenStore(t)
	defer st.Close()
	s, err := st.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(context.Background(), id, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != s.MessageCount {
		t.Fatalf("session counts %d messages, holds %d", s.MessageCount, len(msgs))
	}
	var prompts []string
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
		switch m.Role {
		case loom.RoleUser:
			prompts = append(prompts, m.Text())
		case loom.RoleAssistant:
			for _, p := range m.Parts {
				if p.Type == loom.PartText && !answers[p.Text] {
					t.Fatalf("seq %d holds a partial or unknown reply: %q", m.Seq, p.Text)
				}
				if p.Type == loom.PartTool && p.Status == loom.ToolPending {
					t.Fatalf("seq %d holds a pending tool call", m.Seq)
				}
			}
		}
	}
	if !slices.IsSortedFunc(prompts, func(a, b string) int { return strings.Compare(a, b) }) || len(slices.Compact(slices.Clone(prompts))) != len(prompts) {
		t.Fatalf("prompts out of order or repeated: %q", prompts)
	}
	return msgs
}

// noOrphans checks that the request a provider got pairs every tool call
// with its result: the contract a crash must not break.
func noOrphans(t *testing.T, req []clitest.Wire) {
	t.Helper()
	results := map[string]bool{}
	for _, w := range req {
		if w.Role == "tool" {
			results[w.ToolCallID] = true
		}
	}
	calls := 0
	for _, w := range req {
		for range w.ToolCalls {
			calls++
		}
	}
	if calls != len(results) {
		t.Fatalf("the provider got %d tool calls and %d results: %+v", calls, len(results), req)
	}
}

// kill -9 at a random point of a turn, again and again on one session:
// after each, the store holds nothing partial, and the next turn resumes
// it with every tool call answered.
func TestFaultKillDuringTurn(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	if err := os.WriteFile(filepath.Join(fx.Project, "notes.txt"), []byte("forty-two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noCompaction(t, fx.Fixture)
	answers := map[string]bool{"recovered": true}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	n := trials(4, 100)
	killed := 0
	for i := range n {
		answers[faultAnswer(i)] = true
		fx.WithProvider(t, faultReplies(i)...)
		cmd := fx.Cmd(t, "run", "--key", "fault:kill", "--no-resume-hint", fmt.Sprintf("prompt %03d", i))
		var stderr syncio.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Duration(rng.IntN(250)) * time.Millisecond):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			killed++
		}
	}
	t.Logf("%d trials, %d killed mid-turn (the rest finished first)", n, killed)
	fx.WithProvider(t, openaitest.Reply{Text: "recovered"})
	r := fx.MustLoom(t, "", "run", "--key", "fault:kill", "--no-resume-hint", "prompt 999")
	id := clitest.SessionOf(t, r.Stderr)
	if strings.TrimSpace(r.Stdout) != "recovered" {
		t.Fatalf("the turn after the kills answered %q", r.Stdout)
	}
	noOrphans(t, fx.LastRequest(t))
	msgs := checkSession(t, fx, id, answers)
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == loom.PartTool && (p.Status == loom.ToolRunning || p.Status == loom.ToolPending) {
				t.Fatalf("seq %d: a tool part is still %s after the resume", m.Seq, p.Status)
			}
		}
	}
}

// A provider that drops the connection mid-reply: the turn fails with
// one line, the prompt stays, nothing partial is stored, and the next
// turn resumes.
func TestFaultProviderDrop(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	noCompaction(t, fx.Fixture)
	for i := range trials(2, 20) {
		fx.WithProvider(t, openaitest.Reply{Text: "half of an answer that never", Truncate: true})
		r := fx.Loom(t, "", "run", "--key", "fault:drop", "--no-resume-hint", fmt.Sprintf("prompt %03d", i))
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != cli.ExitError || !strings.HasPrefix(lines[len(lines)-1], "loom: ") {
			t.Fatalf("a dropped stream: exit %d, stderr %q", r.Code, r.Stderr)
		}
	}
	fx.WithProvider(t, openaitest.Reply{Text: "whole"})
	r := fx.MustLoom(t, "", "run", "--key", "fault:drop", "--no-resume-hint", "prompt 999")
	msgs := checkSession(t, fx, clitest.SessionOf(t, r.Stderr), map[string]bool{"whole": true})
	if n := len(msgs); n != trials(2, 20)+2 || msgs[n-1].Text() != "whole" {
		t.Fatalf("after the drops the session holds %d messages", n)
	}
}

// A disk that fills up under a turn: one clear line, exit 1, nothing
// lost or half-written; with room again the session resumes. It needs a
// small tmpfs, which only a process allowed to mount can make.
func TestFaultDiskFull(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "the disk that fills is the SQLite store's")
	fx := clitest.NewAgentFixture(t)
	disk := storetest.SmallDisk(t, "3m", "")
	db := filepath.Join(disk, "sessions.db")
	fx.WithProvider(t, openaitest.Reply{Text: "first"})
	run := func(prompt string) clitest.Result {
		cmd := fx.Cmd(t, "run", "--key", "fault:disk", "--no-resume-hint", prompt)
		cmd.Env = append(cmd.Env, "LOOM_DB="+db)
		return clitest.ExecCmd(t, cmd, "")
	}
	if r := run("before the disk fills"); r.Code != 0 {
		t.Fatalf("first turn: %d %s", r.Code, r.Stderr)
	}
	free := storetest.Fill(t, disk)
	failed := 0
	for i := range trials(3, 20) {
		fx.WithProvider(t, openaitest.Reply{Text: strings.Repeat("a long answer ", 2000)})
		r := run(fmt.Sprintf("prompt %03d %s", i, strings.Repeat("x", 32<<10)))
		if r.Code == 0 {
			continue
		}
		failed++
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != cli.ExitError || !strings.HasPrefix(lines[len(lines)-1], "loom: cannot write "+db+": its disk is full; free some space there") ||
			strings.Contains(r.Stderr, "goroutine") {
			t.Fatalf("a full disk: exit %d, stderr %q", r.Code, r.Stderr)
		}
	}
	if failed == 0 {
		t.Fatal("no turn failed on a full disk")
	}
	t.Logf("%d of %d turns failed on the full disk, each with one line", failed, trials(3, 20))
	free()
	fx.WithProvider(t, openaitest.Reply{Text: "after"})
	r := run("with room again")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "after" {
		t.Fatalf("after freeing the disk: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	out, err := exec.Command(clitest.LoomBinary(t), "session", "show", "fault:disk", "--json", "--full-history", "--db", db).Output()
	if err != nil {
		t.Fatal(err)
	}
	var shown struct{ Messages []*loom.Message }
	json.Unmarshal(out, &shown)
	if len(shown.Messages) < 4 || shown.Messages[0].Text() != "before the disk fills" || shown.Messages[1].Text() != "first" {
		t.Fatalf("after the full disk the session holds %d messages", len(shown.Messages))
	}
	for _, m := range shown.Messages {
		if m.Role == loom.RoleAssistant && m.Text() != "first" && m.Text() != "after" && m.Text() != strings.Repeat("a long answer ", 2000) {
			t.Fatalf("a partial reply was stored: %.60q", m.Text())
		}
	}
}

// PostgreSQL: the server ends loom's connections in the middle of a turn.
// The turn may fail (one line) or finish on a new connection; either
// way nothing partial is stored and the session resumes.
func TestFaultPostgresBackendKilled(t *testing.T) {
	t.Parallel()
	if !clitest.OnPostgres() {
		t.Skip("runs on PostgreSQL (LOOM_TEST_POSTGRES)")
	}
	fx := clitest.NewAgentFixture(t)
	noCompaction(t, fx.Fixture)
	u, err := url.Parse(fx.DB)
	if err != nil {
		t.Fatal(err)
	}
	app := "loomfault" + fmt.Sprint(time.Now().UnixNano()%1e9)
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	db := u.String()
	admin, err := pgx.Connect(context.Background(), clitest.TestPostgres())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	answers := map[string]bool{"recovered": true}
	failed := 0
	n := trials(3, 30)
	for i := range n {
		answer := fmt.Sprintf("slow answer %d: %s", i, strings.Repeat("word ", 30))
		answers[answer] = true
		fx.WithProvider(t, openaitest.Reply{Text: answer, Delay: 10 * time.Millisecond})
		cmd := fx.Cmd(t, "run", "--key", "fault:pg", "--no-resume-hint", fmt.Sprintf("prompt %03d", i))
		cmd.Env = append(cmd.Env, "LOOM_DB="+db)
		var stderr syncio.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(100+i*37%300) * time.Millisecond)
		if _, err := admin.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, app); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			failed++
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if !strings.HasPrefix(lines[len(lines)-1], "loom: ") || strings.Contains(stderr.String(), "goroutine") {
				t.Fatalf("a killed backend: exit %d, stderr %q", code, stderr.String())
			}
		}
	}
	t.Logf("%d trials: %d turns failed with one line, %d finished on a new connection", n, failed, n-failed)
	fx.WithProvider(t, openaitest.Reply{Text: "recovered"})
	cmd := fx.Cmd(t, "run", "--key", "fault:pg", "--no-resume-hint", "prompt 999")
	cmd.Env = append(cmd.Env, "LOOM_DB="+db)
	r := clitest.ExecCmd(t, cmd, "")
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "recovered" {
		t.Fatalf("after the killed backends: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	checkSession(t, fx, clitest.SessionOf(t, r.Stderr), answers)
}
