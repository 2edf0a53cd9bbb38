package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/openai/openaitest"
	"github.com/loomhq/loom/sqlite"
	"github.com/loomhq/loom/summarize"
)

// summarizeWorld is a SQLite store in a temporary directory with a
// quiet session to summarise and one that holds a secret, and a fake
// model server.
type summarizeWorld struct {
	st           loom.Engine
	flaky, leaky *loom.Session
	srv          *openaitest.Server
}

func newSummarizeWorld(t *testing.T) *summarizeWorld {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := &summarizeWorld{st: st, srv: openaitest.NewServer(),
		flaky: &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:flaky", Title: "flaky test"},
		leaky: &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:leaky", Title: "deploy"}}
	t.Cleanup(w.srv.Close)
	storetest.AppendTexts(t, st, w.flaky, "Why does TestRetry flake?", "The backoff uses the wall clock; it now waits on the retry event.")
	storetest.AppendTexts(t, st, w.leaky, "deploy with AKIAQ3EGRB7XK2M4T6ZW", "deployed")
	return w
}

// options are the options of loom session summarize on w, with a clock
// an hour ahead so that every session is quiet.
func (w *summarizeWorld) options() (*SummarizeOptions, *term.IOStreams) {
	ios, _, _, _ := term.Test()
	open := func(context.Context) (loom.Engine, error) { return w.st, nil }
	scope := command.Scope{IO: ios, User: func() string { return "local" },
		Project: func() (loom.Project, error) { return loom.Project{}, os.ErrNotExist }}
	return &SummarizeOptions{
		StoredSessions: StoredSessions{IO: ios, Store: open, Resolve: scope.Resolve, DisplayID: scope.DisplayID},
		ReadStore:      open,
		Summarizer: func(_ context.Context, st loom.Store, needProvider bool) (*summarize.Summarizer, error) {
			z := &summarize.Summarizer{Store: st, UserID: "local", Quiet: time.Minute,
				Now: func() time.Time { return time.Now().Add(time.Hour) }}
			if needProvider {
				z.Provider, z.Model = openai.New(openai.Config{BaseURL: w.srv.BaseURL(), MaxRetries: -1}), "gpt-4o-mini"
			}
			return z, nil
		},
		Limit: summarize.DefaultLimit,
	}, ios
}

func outputs(ios *term.IOStreams) (string, string) {
	return ios.Out.(interface{ String() string }).String(), ios.ErrOut.(interface{ String() string }).String()
}

// --all --dry-run says which sessions would be summarised and which are
// skipped, and why, and asks no model.
func TestSessionSummarizeRunDryRun(t *testing.T) {
	t.Parallel()
	w := newSummarizeWorld(t)
	opts, ios := w.options()
	opts.All, opts.DryRun = true, true
	if err := summarizeRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut := outputs(ios)
	if !strings.Contains(out, w.flaky.ID+"  flaky test\n    would be summarised\n") || !strings.Contains(out, w.leaky.ID+"  deploy\n    skipped: ") {
		t.Errorf("dry run:\n%s", out)
	}
	if errOut != "would summarise 1 session, skipped 1\n" {
		t.Errorf("dry run stderr %q", errOut)
	}
	if n := len(w.srv.Requests()); n != 0 {
		t.Errorf("a dry run asked the model %d times", n)
	}
}

// A session named is summarised by the model into its description, and
// printed under its id.
func TestSessionSummarizeRunWritesDescription(t *testing.T) {
	t.Parallel()
	w := newSummarizeWorld(t)
	w.srv.Enqueue(openaitest.Reply{Text: "Found why TestRetry flakes.\nIt waits on the retry event now."})
	opts, ios := w.options()
	opts.Refs, opts.JSON = []string{w.flaky.ID}, true
	if err := summarizeRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := outputs(ios)
	var res []summarize.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "Found why TestRetry flakes.\nIt waits on the retry event now."
	if len(res) != 1 || res[0].SessionID != w.flaky.ID || res[0].Summary != want {
		t.Errorf("--json: %+v", res)
	}
	if s, err := w.st.Session(t.Context(), w.flaky.ID); err != nil || s.Description != want {
		t.Errorf("stored description: %+v, %v", s, err)
	}
	if n := len(w.srv.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}
}

// The command fills its options from the invocation, flags and
// arguments.
func TestNewCmdSessionSummarizeOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionSummarize, "--all", "--dry-run", "--limit", "3")
	if !got.All || !got.DryRun || got.Limit != 3 || len(got.Refs) != 0 || got.Summarizer == nil || got.DisplayID == nil {
		t.Errorf("options: %+v", got)
	}
}
