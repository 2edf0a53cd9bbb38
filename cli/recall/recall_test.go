package recall

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/cmdtest"
	"github.com/loomhq/loom/internal/storetest"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
	"github.com/loomhq/loom/sqlite"
)

// world is a LOOM_HOME and a SQLite store in a temporary directory, with
// a session in the project "api" and one in "web" that say the same.
type world struct {
	env      map[string]string
	dirs     func() (paths.Dirs, error)
	st       loom.Store
	api, web loom.Project
	apiS     *loom.Session
	webS     *loom.Session
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{env: map[string]string{"LOOM_HOME": filepath.Join(root, "home"), "LOOM_RECALL_HOOK_TIME": "1m"}}
	w.dirs = func() (paths.Dirs, error) { return paths.Resolve(w.getenv) }
	for _, name := range []string{"api", "web"} {
		if err := os.MkdirAll(filepath.Join(root, name, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if w.api, err = paths.DetectProject(filepath.Join(root, "api")); err != nil {
		t.Fatal(err)
	}
	if w.web, err = paths.DetectProject(filepath.Join(root, "web")); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(root, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w.st = st
	w.apiS = &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:api", Project: w.api}
	storetest.AppendTexts(t, st, w.apiS, "why does the connection pool time out", "the pool's idle timeout is 30 seconds: raise it")
	w.webS = &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:web", Project: w.web}
	storetest.AppendTexts(t, st, w.webS, "the connection pool times out in web too", "web pool timeout fixed")
	return w
}

func (w *world) getenv(k string) string { return w.env[k] }

// options are loom recall's options in project p of w, and its output.
func (w *world) options(p loom.Project) (*Options, *term.IOStreams) {
	ios, _, _, _ := term.Test()
	return &Options{
		IO:        ios,
		ReadStore: func(context.Context) (loom.Store, error) { return w.st, nil },
		ScopeProject: func(all bool) *loom.Project {
			if all {
				return nil
			}
			return &p
		},
		Cwd:    func() (string, error) { return p.Root, nil },
		Getenv: w.getenv,
		Dirs:   w.dirs,
		User:   "local",
		Tokens: recall.DefaultTokens,
	}, ios
}

func out(ios *term.IOStreams) string { return ios.Out.(interface{ String() string }).String() }

// Recall prints this project's turns about the prompt, each with its
// session id, and keeps to --tokens.
func TestRecallRunPrintsTurnsOfTheProject(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options(w.api)
	opts.Prompt = "pool timeout"
	if err := recallRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	got := out(ios)
	if !strings.Contains(got, "session "+w.apiS.ID) || !strings.Contains(got, "idle timeout is 30 seconds") {
		t.Errorf("recall in api:\n%s\nwant the api session's turn with its id", got)
	}
	if strings.Contains(got, w.webS.ID) {
		t.Errorf("recall in api printed the web session:\n%s", got)
	}

	all := func(tokens int) recall.Result {
		t.Helper()
		opts, ios := w.options(w.api)
		opts.Prompt, opts.AllProjects, opts.JSON, opts.Tokens = "pool timeout", true, true, tokens
		if err := recallRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		var res recall.Result
		if err := json.Unmarshal([]byte(out(ios)), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	full := all(recall.DefaultTokens)
	ids := map[string]bool{}
	for _, turn := range full.Turns {
		ids[turn.SessionID] = true
	}
	if !ids[w.apiS.ID] || !ids[w.webS.ID] {
		t.Errorf("--all-projects recalled sessions %v, want api's and web's", ids)
	}
	if res := all(60); len(res.Turns) == 0 || len(res.Turns) >= len(full.Turns) || res.Tokens > 60 {
		t.Errorf("--tokens 60: %d turns in %d tokens, of %d", len(res.Turns), res.Tokens, len(full.Turns))
	}
}

// A prompt of - is read from stdin.
func TestRecallRunReadsPromptFromStdin(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, ios := w.options(w.web)
	opts.Prompt = "-"
	ios.In = strings.NewReader("pool timeout")
	if err := recallRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if got := out(ios); !strings.Contains(got, "session "+w.webS.ID) {
		t.Errorf("recall of stdin's prompt:\n%s", got)
	}
}

// enable writes the project's setting, which lets its hooks add
// context, and disable takes it out again.
func TestRecallEnableLetsHooksAddContext(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	hook := func() string {
		t.Helper()
		opts, ios := w.options(w.api)
		opts.Hook = "claude-code"
		in, _ := json.Marshal(map[string]string{"cwd": w.api.Root, "hook_event_name": "UserPromptSubmit", "prompt": "pool timeout"})
		ios.In = strings.NewReader(string(in))
		if err := hookRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		if e := ios.ErrOut.(interface{ String() string }).String(); e != "" {
			t.Errorf("hook stderr: %s", e)
		}
		return out(ios)
	}
	if got := hook(); got != "" {
		t.Fatalf("hook before enable printed %q", got)
	}
	marker := filepath.Join(w.env["LOOM_HOME"], "data", "recall", w.api.ID)
	for _, enable := range []bool{true, false} {
		ios, _, _, _ := term.Test()
		opts := &EnableOptions{IO: ios, Project: func() (loom.Project, error) { return w.api, nil }, Dirs: w.dirs, Enable: enable}
		if err := enableRun(opts); err != nil {
			t.Fatal(err)
		}
		state := map[bool]string{true: "enabled", false: "disabled"}[enable]
		if want := "Recall " + state + " for project api (" + w.api.Root + ").\n"; out(ios) != want {
			t.Errorf("%s: %q, want %q", state, out(ios), want)
		}
		if _, err := os.Stat(marker); (err == nil) != enable {
			t.Errorf("%s: the setting %s: %v", state, marker, err)
		}
		got := hook()
		if !enable {
			if got != "" {
				t.Errorf("hook after disable printed %q", got)
			}
			continue
		}
		var o hookOutput
		if err := json.Unmarshal([]byte(got), &o); err != nil {
			t.Fatalf("hook output %q: %v", got, err)
		}
		if o.HookSpecificOutput.HookEventName != "UserPromptSubmit" || !strings.Contains(o.HookSpecificOutput.AdditionalContext, w.apiS.ID) {
			t.Errorf("hook after enable: %+v", o)
		}
	}
}

// The command fills its options from the invocation, its flags and its
// arguments.
func TestNewCmdRecallOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, NewCmdRecall, "--tokens", "300", "-a", "retry", "backoff")
	if got.Prompt != "retry backoff" || got.Tokens != 300 || !got.AllProjects || got.User != "local" || got.ReadStore == nil || got.Redact == nil {
		t.Errorf("options: %+v", got)
	}
}
