package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/export"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/secrets/secretstest"
)

// importOptions are loom session import's options into w's store, as
// user, reading Claude Code's sessions under w's root/home; adopted
// counts the calls to AdoptImported.
func (w *world) importOptions(ios *term.IOStreams, user string, adopted *int) *ImportOptions {
	return &ImportOptions{
		IO: ios, ReadStore: w.open, CreateStore: w.open,
		Cwd:           func() (string, error) { return w.root, nil },
		Formats:       []importer.Format{claudecode.New()},
		Getenv:        func(string) string { return "" },
		Home:          func() string { return filepath.Join(w.root, "home") },
		Now:           time.Now,
		ImportProject: paths.ProjectOf,
		AdoptImported: func(context.Context, loom.Engine) { *adopted++ },
		User:          user,
	}
}

// writeExport writes sessions of w's store as a jsonl export to file,
// and returns its path.
func (w *world) writeExport(t *testing.T, file string, ss ...*loom.Session) string {
	t.Helper()
	data, err := export.Load(t.Context(), w.st, ss)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := export.Write(&b, export.JSONL, data); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(w.root, file)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// An export comes in whole, as the importing user's, its ids printed;
// the same export again adds nothing and says so; a session that went
// on differently on both sides comes in beside the one held, as a copy.
func TestSessionImportRunFiles(t *testing.T) {
	t.Parallel()
	from, to := newWorld(t), newWorld(t)
	s := from.session(t, from.api, "cli:api", "pool timeout", "why does the pool time out", "the idle timeout")
	file := from.writeExport(t, "a.jsonl", s)
	var adopted int

	ios := piped()
	opts := to.importOptions(ios, "ann", &adopted)
	opts.Files = []string{file}
	if err := importRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out, errOut := outputs(ios); out != s.ID+"\n" || errOut != "" {
		t.Errorf("import: %q, stderr %q; want the session's id", out, errOut)
	}
	got := to.stored(t, s.ID)
	if got.UserID != "ann" || got.Title != "pool timeout" || got.MessageCount != 2 {
		t.Errorf("imported: user %s, %q, %d messages; want ann's \"pool timeout\" with 2", got.UserID, got.Title, got.MessageCount)
	}

	ios = piped()
	opts.IO = ios
	if err := importRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out, errOut := outputs(ios); out != "" || errOut != "1 session this store holds already left out.\n" {
		t.Errorf("the same import again: %q, stderr %q", out, errOut)
	}

	storetest.AppendTexts(t, to.st, got, "on this side")
	storetest.AppendTexts(t, from.st, s, "on the other side")
	opts.Files, opts.JSON = []string{from.writeExport(t, "b.jsonl", s)}, true
	ios = piped()
	opts.IO = ios
	if err := importRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	_, errOut := outputs(ios)
	sum := printedJSON[importSummary](t, ios)
	if sum.Copies != 1 || sum.Held != 0 || len(sum.Sessions) != 1 || sum.Messages != 3 ||
		errOut != `1 session this store holds with other messages imported beside them as "T (imported)".`+"\n" {
		t.Errorf("a session that went on on both sides: %+v, stderr %q", sum, errOut)
	}
	if c := to.stored(t, sum.Sessions[0]); c.Title != "pool timeout (imported)" || c.MessageCount != 3 || to.stored(t, s.ID).MessageCount != 3 {
		t.Errorf("the copy: %q with %d messages", c.Title, c.MessageCount)
	}
}

// claudeSession writes a Claude Code session file of one turn under
// w's root/home/.claude/projects, and returns its id and path.
func (w *world) claudeSession(t *testing.T) (id, path string) {
	t.Helper()
	id = "6b1e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14"
	dir := filepath.Join(w.root, "home", ".claude", "projects", "-api")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	common := fmt.Sprintf(`"isSidechain":false,"userType":"external","cwd":%q,"sessionId":%q,"version":"2.1.62"`, w.api.Root, id)
	lines := []string{
		`{"parentUuid":null,` + common + `,"type":"user","message":{"role":"user","content":"why does the pool time out"},"uuid":"3d0a1c52-8f4e-4b7a-a1d9-6c2e5f8b0a31","timestamp":"2026-05-18T14:02:11.204Z"}`,
		`{"parentUuid":"3d0a1c52-8f4e-4b7a-a1d9-6c2e5f8b0a31",` + common + `,"type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_01Hq8vKx3TzR5bNw2YpLc7Ga","type":"message","role":"assistant","content":[{"type":"text","text":"the idle timeout is 30 seconds"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":9}},"uuid":"9e4b7f10-2c6d-4a83-b5e1-8d0f3a9c2e67","timestamp":"2026-05-18T14:02:15.004Z"}`,
	}
	path = filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return id, path
}

// --from TOOL imports the tool's sessions from its own place and
// reports it; again, nothing is read twice. --from list says where each
// agent keeps its sessions and how many.
func TestSessionImportRunFromTool(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, _ := w.claudeSession(t)
	var adopted int

	ios := piped()
	opts := w.importOptions(ios, "local", &adopted)
	opts.From = "list"
	opts.JSON = true
	if err := importRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut := outputs(ios)
	agents := printedJSON[[]AgentFound](t, ios)
	root := filepath.Join(w.root, "home", ".claude", "projects")
	if len(agents) != 1 || agents[0].Agent != "claude-code" || !agents[0].Found || agents[0].Sessions != 1 || agents[0].Paths[0] != root || errOut != "" {
		t.Errorf("--from list --json: %s, stderr %q", out, errOut)
	}
	ios = piped()
	opts.IO, opts.JSON = ios, false
	if err := importRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut = outputs(ios)
	// A row: the agent, its sessions, where they are (under HOME as ~).
	if !strings.Contains(out, "\nclaude-code         1  ~/.claude/projects\n") ||
		errOut != "1 of 1 agents found; loom session import --from all imports them.\n" {
		t.Errorf("--from list:\n%s\nstderr %q", out, errOut)
	}

	for i, want := range []string{"  sessions  1 new, 0 grown, 0 unchanged\n", "  files     0 read, 1 unchanged\n"} {
		ios = piped()
		opts = w.importOptions(ios, "local", &adopted)
		opts.From = "claude-code"
		if err := importRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		out, _ := outputs(ios)
		if !strings.HasPrefix(out, "claude-code  "+root+"\n") || !strings.Contains(out, want) {
			t.Errorf("import %d --from claude-code:\n%s\nwant %q", i+1, out, want)
		}
	}
	if adopted != 2 {
		t.Errorf("the imports adopted %d times, want 2", adopted)
	}
	got, err := w.st.Resolve(t.Context(), "claude-code:"+id, loom.ResolveScope{UserID: "local"})
	if err != nil || got.Surface != "claude-code" || got.MessageCount != 2 || got.Project.ID != w.api.ID {
		t.Errorf("imported: %+v (%v); want 2 messages of claude-code in project api", got, err)
	}
}

// --hook imports the session the hook's JSON names, quietly; input that
// is not hook JSON, or a tool without such hooks, fails with exit status
// 1, never 2.
func TestSessionImportRunHook(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id, path := w.claudeSession(t)
	var adopted int
	// hook runs tool's hook on input.
	hook := func(tool, input string) (string, error) {
		ios := piped()
		ios.In = strings.NewReader(input)
		opts := w.importOptions(ios, "local", &adopted)
		opts.Hook = tool
		err := importRun(t.Context(), opts)
		out, errOut := outputs(ios)
		return out + errOut, err
	}
	in, _ := json.Marshal(map[string]any{"session_id": id, "transcript_path": path, "hook_event_name": "Stop"})
	if out, err := hook("claude-code", string(in)); err != nil || out != "" {
		t.Fatalf("hook: %v, output %q", err, out)
	}
	if got, err := w.st.Resolve(t.Context(), "claude-code:"+id, loom.ResolveScope{UserID: "local"}); err != nil || got.MessageCount != 2 {
		t.Errorf("after the hook: %+v, %v", got, err)
	}
	for _, c := range []struct{ tool, input, want string }{
		{"claude-code", "{not json", "not claude-code hook JSON"},
		{"claude-code", `{"hook_event_name":"Stop"}`, "names no session file"},
		{"claude-code", `{"transcript_path":"relative.jsonl"}`, "not an absolute path"},
		{"cursor", string(in), `--hook "cursor": want claude-code, codex or gemini`},
	} {
		_, err := hook(c.tool, c.input)
		if err == nil || !strings.Contains(err.Error(), c.want) || command.ExitCode(err) != command.ExitError {
			t.Errorf("hook %s %s: %v (exit %d), want exit 1 saying %q", c.tool, c.input, err, command.ExitCode(err), c.want)
		}
	}
}

// newCmdImport is newCmdSessionImport on an invocation that reads
// Claude Code's sessions.
func newCmdImport(inv *command.Invocation, runF func(*ImportOptions) error) *cobra.Command {
	inv.Formats = []importer.Format{claudecode.New()}
	return newCmdSessionImport(inv, runF)
}

// The command takes files, --from TOOL with paths, --from list or
// --hook TOOL, each with the flags that go with it alone; a hook's
// mistake exits 1.
func TestNewCmdSessionImportOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdImport, "a.jsonl", "-"); strings.Join(got.Files, ",") != "a.jsonl,-" || got.From != "" || got.CreateStore == nil {
		t.Errorf("files: %+v", got)
	}
	got := cmdtest.Options(t, newCmdImport, "--from", "claude-code", "--dry-run", "--since", "2026-06-01", "backup")
	if got.From != "claude-code" || !got.DryRun || got.Since.Format(time.DateOnly) != "2026-06-01" || strings.Join(got.Files, ",") != "backup" {
		t.Errorf("--from claude-code: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdImport, "--from", "all", "--watch"); got.From != "all" || !got.Watch {
		t.Errorf("--from all --watch: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdImport, "--from", "list"); got.From != "list" {
		t.Errorf("--from list: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdImport, "--hook", "claude-code"); got.Hook != "claude-code" || got.User != "local" {
		t.Errorf("--hook: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdImport), "give the FILEs to import, or --from TOOL")
	refused(t, cmdtest.Rejects(t, newCmdImport, "a.jsonl", "--dry-run"), "go with --from TOOL")
	refused(t, cmdtest.Rejects(t, newCmdImport, "--from", "list", "--dry-run"), "--from list goes alone")
	refused(t, cmdtest.Rejects(t, newCmdImport, "--from", "claude-code", "--rescan", "--watch"), "does not go with --watch")
	refused(t, cmdtest.Rejects(t, newCmdImport, "--from", "cursor"), `--from "cursor": want claude-code, all, or list`)
	refused(t, cmdtest.Rejects(t, newCmdImport, "--from", "claude-code", "--since", "later"), "--since: ")
	err := cmdtest.Fails(t, newCmdImport, "--hook", "claude-code", "--from", "claude-code")
	var ue *command.UsageError
	if errors.As(err, &ue) || command.ExitCode(err) != command.ExitError || !strings.Contains(err.Error(), "--hook goes alone") {
		t.Errorf("--hook with --from: %v (exit %d), want exit 1 saying --hook goes alone", err, command.ExitCode(err))
	}
}

// --watch prints a line for each session it imports, with its title:
// with [secrets] redact_on_write the title printed is the one the store
// keeps, redacted, not the first prompt as the agent wrote it.
func TestWatchPrintsTitlesAsStored(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_DATA_HOME": filepath.Join(home, "data"),
		"XDG_STATE_HOME": filepath.Join(home, "state"), "LOOM_REDACT_ON_WRITE": "true"}
	ios := piped()
	inv := command.NewInvocation(&command.Factory{IO: ios, Env: func(k string) string { return env[k] }, Getwd: func() (string, error) { return home, nil }})
	t.Cleanup(func() { inv.Close() })
	var opts *ImportOptions
	cmd := newCmdImport(inv, func(o *ImportOptions) error { opts = o; return nil })
	cmd.SetArgs([]string{"--from", "claude-code", "--watch"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	tok := secretstest.New(75).Secret("github-token").Value
	rep := &importer.Report{Tools: []*importer.ToolReport{{Tool: "claude-code", Changes: []importer.SessionChange{
		{SessionID: "s1", Title: "push with " + tok + " to main", New: true, Messages: 2},
	}}}}
	printImportChanges(opts, rep)
	out, _ := outputs(ios)
	if strings.Contains(out, tok[4:16]) || !strings.Contains(out, "[REDACTED:") {
		t.Errorf("--watch printed %q", out)
	}
}
