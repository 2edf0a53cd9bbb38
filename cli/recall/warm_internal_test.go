package recall

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/recall"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sqlite"
)

// With a warm recall listening (the capture service's), a hook answers
// from it without opening the store or compiling the secret rules in
// its own process, redacted as its own recall would be. Where the
// socket is left by a warm recall that has stopped, or the warm recall
// is of another store, the hook recalls by itself, and answers all the
// same.
func TestHookAsksTheWarmRecall(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "loom.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dir := t.TempDir()
	p, err := paths.DetectProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: "cli:pool", Title: "Connection pool exhausted", Surface: "cli", Project: p, Cwd: dir}
	if err := st.Append(ctx, s,
		&loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "The API times out under load; the postgres connection pool is exhausted."}}},
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "Decided: pgxpool max_conns 32; the key was AKIAZ3MHQW7PLN5RXT4B."}}},
	); err != nil {
		t.Fatal(err)
	}
	dirs := paths.Dirs{Data: filepath.Join(t.TempDir(), "data"), State: filepath.Join(t.TempDir(), "state")}
	dirsOf := func() (paths.Dirs, error) { return dirs, nil }
	if err := setEnabled(dirsOf, p, true); err != nil {
		t.Fatal(err)
	}
	opened := 0
	hook := func(store string) string {
		t.Helper()
		io, in, out, errOut := term.Test()
		in.WriteString(`{"session_id":"x","cwd":"` + dir + `","hook_event_name":"UserPromptSubmit","prompt":"why does the postgres pool time out?"}`)
		opts := &Options{IO: io, Hook: "claude-code", User: "alice", Dirs: dirsOf, Cwd: func() (string, error) { return dir, nil },
			Store:     func() (string, error) { return store, nil },
			ReadStore: func(context.Context) (loom.Store, error) { opened++; return st, nil },
			HookTime:  func() (time.Duration, error) { return time.Minute, nil },
			Started:   time.Now, Redact: secrets.Default}
		if err := hookRun(ctx, opts); err != nil || errOut.Len() > 0 {
			t.Fatalf("hook: %v, %s", err, errOut)
		}
		var o hookOutput
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatalf("hook printed %q: %v", out, err)
		}
		text := o.HookSpecificOutput.AdditionalContext
		if !strings.Contains(text, "max_conns 32") || strings.Contains(text, "AKIAZ3MHQW7PLN5RXT4B") {
			t.Fatalf("hook's context %q: want the session's reply, its key redacted", text)
		}
		return text
	}

	wctx, stop := context.WithCancel(ctx)
	if err := recall.Serve(wctx, recall.WarmSocket(dirs.State), recall.Answerer("file:loom.db", st, secrets.Default)); err != nil {
		t.Fatal(err)
	}
	warm := hook("file:loom.db")
	if opened != 0 {
		t.Fatalf("with a warm recall listening, the hook opened the store itself (%d times)", opened)
	}
	if other := hook("file:another.db"); other != warm || opened != 1 {
		t.Fatalf("with a warm recall of another store: opened the store %d times, answered %q; want once, %q", opened, other, warm)
	}
	stop()
	// The socket is left behind; no one listens on it.
	for {
		if _, err := recall.Ask(ctx, recall.WarmSocket(dirs.State), recall.Question{}); !errors.Is(err, recall.ErrOtherStore) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if stale := hook("file:loom.db"); stale != warm || opened != 2 {
		t.Fatalf("with the warm recall stopped: opened the store %d times, answered %q; want twice, %q", opened, stale, warm)
	}
}
