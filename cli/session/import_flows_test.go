package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/fsfault"
)

// touchAll gives every file under dir the modification time now: files
// a tool has just written.
func touchAll(t *testing.T, dir string) {
	t.Helper()
	now := time.Now()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, now, now)
		}
		return nil
	})
}

// An import run right after the files were written (a hook after a
// reply, a copy from a backup) imports every message they hold, the last
// reply included; a second run adds nothing.
func TestImportRightAfterWriting(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	installAgentSessions(t, fx.Home)
	touchAll(t, fx.Home)
	rep := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "all", "--json"))
	for _, tr := range rep.Tools {
		if tr.RootsFound > 0 && (tr.SessionsNew == 0 || tr.FilesFailed != 0) {
			t.Errorf("%s: %+v", tr.Tool, tr)
		}
	}
	// The last line of this file is its final reply.
	file := filepath.Join(fx.Home, ".claude", "projects", "-path-to-Demo", "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl")
	last := lastLine(t, file)
	reply := last["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	msgs := fx.ShowMessages(t, "claude-code:"+last["sessionId"].(string))
	if got := msgs[len(msgs)-1]; got.Role != loom.RoleAssistant || !strings.Contains(got.Text(), reply) {
		t.Errorf("the session ends with %s %q, want the file's last reply %q", got.Role, got.Text(), reply)
	}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == loom.PartTool && p.Status != loom.ToolCompleted && p.Status != loom.ToolError {
				t.Errorf("tool part %s is %q, want completed or error", p.ID, p.Status)
			}
		}
	}
	touchAll(t, fx.Home)
	again := clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "all", "--json"))
	for _, tr := range again.Tools {
		if tr.MessagesAdded != 0 || tr.SessionsNew != 0 || tr.ToolsUpdated != 0 {
			t.Errorf("second run of %s added: %+v", tr.Tool, tr)
		}
	}
}

// A Claude Code Stop hook (and Gemini CLI's, and Codex's notify program)
// imports the one session it names, quietly; a second call adds
// nothing; bad input is one line and exit status 1, never 2 (which
// Claude Code takes as "keep going").
func TestImportHook(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	installAgentSessions(t, fx.Home)
	file := filepath.Join(fx.Home, ".claude", "projects", "-home-user-spotter", "short.jsonl")
	id := lastLine(t, file)["sessionId"].(string)
	in, _ := json.Marshal(map[string]any{"session_id": id, "transcript_path": file, "cwd": fx.Project, "hook_event_name": "Stop", "stop_hook_active": false})
	start := time.Now()
	r := fx.Exec(t, string(in), "session", "import", "--hook", "claude-code")
	t.Logf("hook import of %s took %s (process included)", filepath.Base(file), time.Since(start).Round(time.Millisecond))
	if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
		t.Fatalf("hook: exit %d\nstdout %q\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	var listed []*loom.Session
	json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "--all-projects", "--json")), &listed)
	if len(listed) != 1 || listed[0].Key != "claude-code:"+id {
		t.Fatalf("after the hook: %d sessions listed, want the one it named", len(listed))
	}
	r = fx.Exec(t, string(in), "session", "import", "--hook", "claude-code", "--json")
	if r.Code != 0 {
		t.Fatalf("second hook: exit %d %s", r.Code, r.Stderr)
	}
	if tr := clitest.ToolReport(t, clitest.ImportReport(t, r.Stdout), "claude-code"); tr.MessagesAdded != 0 || tr.FilesUnchanged != 1 {
		t.Errorf("second hook call: %+v", tr)
	}

	// Codex's notify program gets its JSON as the last argument.
	notify := `{"type":"agent-turn-complete","thread-id":"0199a213-81c0-7800-8aa1-bbab2a035a53","turn-id":"1","cwd":"/x","input-messages":["hi"],"last-assistant-message":"done"}`
	if r := fx.Exec(t, "", "session", "import", "--hook", "codex", notify); r.Code != 0 {
		t.Fatalf("codex notify: exit %d %s", r.Code, r.Stderr)
	}
	json.Unmarshal([]byte(fx.MustExec(t, "session", "list", "--all-projects", "--surface", "codex", "--json")), &listed)
	if len(listed) != 1 {
		t.Fatalf("after codex's notify: %d codex sessions", len(listed))
	}

	for _, bad := range []struct{ stdin, tool, want string }{
		{"{not json", "claude-code", "not claude-code hook JSON"},
		{`{"hook_event_name":"Stop"}`, "claude-code", "names no session file"},
		{`{"transcript_path":"relative.jsonl"}`, "claude-code", "not an absolute path"},
		{`{"transcript_path":"/nowhere/x.jsonl"}`, "gemini", "/nowhere/x.jsonl"},
		{`{}`, "vim", "want claude-code, codex or gemini"},
	} {
		r := fx.Exec(t, bad.stdin, "session", "import", "--hook", bad.tool)
		if r.Code != cli.ExitError || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, bad.want) {
			t.Errorf("hook input %s for %s: exit %d, stderr %q; want exit 1 and one line with %q", bad.stdin, bad.tool, r.Code, r.Stderr, bad.want)
		}
	}
}

// What cannot be read is one line each, exit status 1, and the rest is
// imported: a FIFO and /dev/zero are refused at once, not read forever.
func TestImportFailsLoudly(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	installAgentSessions(t, fx.Home)
	fifo := filepath.Join(fx.Home, "x.jsonl")
	fsfault.Fifo(t, fifo)
	good := filepath.Join(fx.Home, ".claude", "projects", "-home-user-spotter", "short.jsonl")
	for _, paths := range [][]string{{fifo}, {"/dev/zero"}, {fifo, good}} {
		start := time.Now()
		r := fx.Exec(t, "", append([]string{"session", "import", "--from", "claude-code", "--json"}, paths...)...)
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%v took %s", paths, time.Since(start))
		}
		if r.Code != cli.ExitError || !strings.Contains(r.Stderr, "could not be read") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", paths, r.Code, r.Stderr)
		}
		tr := clitest.ToolReport(t, clitest.ImportReport(t, r.Stdout), "claude-code")
		if tr.FilesFailed != 1 {
			t.Errorf("%v: %+v", paths, tr)
		}
	}
	if out := fx.MustExec(t, "session", "list", "--all-projects", "--json"); !strings.Contains(out, "claude-code:") {
		t.Errorf("the readable file beside the FIFO was not imported: %s", out)
	}
}

// Tools' directories that are symbolic links (a dotfile manager, a moved
// disk) import like real ones.
func TestImportThroughSymlinks(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	installAgentSessions(t, fx.Home)
	projects := filepath.Join(fx.Home, ".claude", "projects")
	moved := filepath.Join(fx.Home, "disk", "claude-projects")
	os.MkdirAll(filepath.Dir(moved), 0o755)
	if err := os.Rename(projects, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, projects); err != nil {
		t.Fatal(err)
	}
	tr := clitest.ToolReport(t, clitest.ImportReport(t, fx.MustExec(t, "session", "import", "--from", "claude-code", "--json")), "claude-code")
	if tr.FilesRead == 0 || tr.SessionsNew == 0 {
		t.Fatalf("through a linked ~/.claude/projects: %+v", tr)
	}
}

// --watch started before the tool ever ran (no ~/.claude/projects yet)
// sees the tool's first session as soon as it is written, not at the
// next rescan 30 s later.
func TestImportWatchBeforeTheToolExists(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	select {
	case <-fx.WatchImports(t, "claude-code"):
	case <-time.After(60 * time.Second):
		t.Fatal("--watch printed no first report")
	}
	dir := filepath.Join(fx.Home, ".claude", "projects", "-src-api")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(clitest.Samples, "claude-code", "spotter", "short.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	written := time.Now()
	if err := os.WriteFile(filepath.Join(dir, "55604662-cf2a-4331-851a-ec234028f8ca.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	st := fx.OpenStore(t)
	for {
		ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "local", Key: "claude-code:55604662-cf2a-4331-851a-ec234028f8ca"})
		if err == nil && len(ss) == 1 {
			t.Logf("imported %s after the tool's first file was written", time.Since(written).Round(time.Millisecond))
			return
		}
		if time.Since(written) > 5*time.Second {
			t.Fatalf("the first session of a new install was not imported within 5 s (%v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Ctrl+C stops an import in the middle of a hostile file: a 64 GB file of
// one line with no newline (sparse, so the test writes nothing) is read
// until the interrupt, then the command ends at once.
func TestImportInterruptedInAHugeLine(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	huge := filepath.Join(fx.Home, "huge.jsonl")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil {
		f.Close()
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	cmd := exec.Command(clitest.LoomBinary(t), "session", "import", "--from", "claude-code", huge)
	cmd.Dir, cmd.Env = fx.Project, fx.BinEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		if cmd.ProcessState.ExitCode() == 0 {
			t.Errorf("an interrupted import exits 0 (stderr %q)", stderr.String())
		}
		if strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("interrupted import's stderr is more than one line: %q", stderr.String())
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the import went on reading 5 s after Ctrl+C")
	}
}

// --watch prints the first import's report, then a line a change: the
// session that grew and by how much, not the whole report again.
func TestImportWatchPrintsALineAChange(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	claude := installAgentSessions(t, fx.Home)
	stdout := fx.StartWatch(t, "claude-code")
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("--watch ended before %s", what)
			}
			return l
		case <-time.After(60 * time.Second):
			t.Fatalf("--watch printed no %s", what)
		}
		return ""
	}
	// The first report is printed whole; it ends with its time line.
	for {
		if l := next("first report"); strings.HasPrefix(strings.TrimSpace(l), "time ") {
			break
		}
	}
	file := filepath.Join(claude, "-home-user-spotter", "short.jsonl")
	appendClaudeUserLine(t, file, "9d1e5f2a-0000-4000-8000-00000000b0b0", "one more question while watching")
	got := next("line for the change")
	if !regexp.MustCompile(`^claude-code: \+1 message in \S.*$`).MatchString(got) {
		t.Fatalf("the change printed %q, want claude-code: +1 message in TITLE", got)
	}
	appendClaudeUserLine(t, file, "9d1e5f2a-0000-4000-8000-00000000b0b1", "and another")
	if got2 := next("line for the second change"); got2 != got {
		t.Fatalf("the second change printed %q, want %q (a line a change, no report)", got2, got)
	}
}

// Claude Code fires its Stop hook before it writes the turn's reply to
// the session file, and passes the reply's text as
// last_assistant_message: the hook waits for the reply to reach the file,
// so that loom holds every reply when the turn ends.
func TestImportHookWaitsForTheReply(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	clitest.LoomBinary(t) // built before the clock starts
	const sid = "5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f"
	dir := filepath.Join(fx.Home, ".claude", "projects", "-home-dev-notes")
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, sid+".jsonl")
	line := func(typ, uuid, parent, at, message string) string {
		return `{"parentUuid":` + parent + `,"isSidechain":false,"userType":"external","cwd":"/home/dev/notes","sessionId":"` + sid + `","version":"2.1.330","gitBranch":"","type":"` + typ + `","message":` + message + `,"uuid":"` + uuid + `","timestamp":"` + at + `"}` + "\n"
	}
	const reply = "There are 2 files: notes-hc.txt and todo.md."
	prompt := line("user", "a1000000-0000-4000-8000-000000000001", "null", "2026-11-20T10:00:00.000Z",
		`{"role":"user","content":"How many files are here?"}`)
	answer := line("assistant", "a1000000-0000-4000-8000-000000000002", `"a1000000-0000-4000-8000-000000000001"`, "2026-11-20T10:00:03.000Z",
		`{"model":"claude-sonnet-4-5","id":"msg_01Reply","type":"message","role":"assistant","content":[{"type":"text","text":"`+reply+`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":120,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":14}}`)
	if err := os.WriteFile(file, []byte(prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"session_id": sid, "transcript_path": file, "cwd": "/home/dev/notes", "hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": reply})
	cmd, stdin, stderr := startOnPipe(t, fx, "session", "import", "--hook", "claude-code")
	if _, err := stdin.Write(in); err != nil {
		t.Fatal(err)
	}
	// The reply reaches the file a second after the hook has read its
	// payload (however slowly it started), as Claude Code writes it
	// after firing the hook.
	waitRead(t, stdin)
	stdin.Close()
	time.Sleep(time.Second)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(answer)
	f.Close()
	if err := cmd.Wait(); err != nil || stderr.String() != "" {
		t.Fatalf("hook: %v, stderr %q", err, stderr.String())
	}
	msgs := fx.ShowMessages(t, "claude-code:"+sid)
	if got := msgs[len(msgs)-1]; got.Role != loom.RoleAssistant || got.Text() != reply {
		t.Errorf("the session ends with %s %q, want the turn's reply", got.Role, got.Text())
	}
}
