package session

import (
	"context"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// resumeOptions are loom session resume's options on w, whose chat and
// run record the session and prompt they were given in got.
func (w *world) resumeOptions(got *[]string) *ResumeOptions {
	ios := piped()
	return &ResumeOptions{
		IO: ios, Store: w.open, Resolve: w.scope(ios).Resolve,
		Project: func() (loom.Project, error) { return w.api, nil },
		Chat:    func(_ context.Context, id string) error { *got = append(*got, "chat "+id); return nil },
		Run: func(_ context.Context, id, prompt string) error {
			*got = append(*got, "run "+id+" "+prompt)
			return nil
		},
		Now: time.Now, User: "local",
	}
}

// Resume chats in the session its reference names, or sends it the
// prompt given; with --json it prints the session and resumes nothing.
// (The chat itself needs a model: chat's package tests it.)
func TestSessionResumeRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.poolTimeout(t)

	var got []string
	opts := w.resumeOptions(&got)
	opts.Ref = "pool timeout"
	if err := resumeRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	opts.Ref, opts.Prompt = "cli:api", "and now the tests"
	if err := resumeRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if want := []string{"chat " + s.ID, "run " + s.ID + " and now the tests"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("resumed %q, want %q", got, want)
	}

	got = nil
	opts = w.resumeOptions(&got)
	opts.Ref, opts.JSON = s.ID, true
	if err := resumeRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if printed := printedJSON[loom.Session](t, opts.IO); printed.ID != s.ID || len(got) != 0 {
		t.Errorf("--json printed %s and resumed %q", printed.ID, got)
	}

	opts.Ref, opts.JSON = "no such session", false
	if err := resumeRun(t.Context(), opts); loom.ErrorCode(err) != loom.ENOTFOUND || len(got) != 0 {
		t.Errorf("an unknown reference: %v, resumed %q", err, got)
	}
}

// The command takes a reference and a prompt; without a reference off a
// terminal (no picker) it is refused.
func TestNewCmdSessionResumeOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdSessionResume, "flaky test", "and now the integration tests")
	if got.Ref != "flaky test" || got.Prompt != "and now the integration tests" || got.User != "local" || got.Chat == nil || got.Run == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdSessionResume, "0196a3b2"); got.Ref != "0196a3b2" || got.Prompt != "" {
		t.Errorf("a reference alone: %+v", got)
	}
	refused(t, cmdtest.Rejects(t, newCmdSessionResume), "a session reference is required when not on a terminal")
	refused(t, cmdtest.Rejects(t, newCmdSessionResume, "a", "b", "c"), "too many arguments")
}
