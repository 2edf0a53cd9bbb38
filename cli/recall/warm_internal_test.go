package recall

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"slices"
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

// With a warm recall listening (the capture service's, or one a hook
// started), a hook answers from it without opening the store or
// compiling the secret rules in its own process, redacted as its own
// recall would be. Where the socket is left by a warm recall that has
// stopped, or only a warm recall of another store listens, the hook
// recalls by itself, answers all the same, and then starts a warm
// recall of its store for the hooks after it: only then, only where
// recall is enabled, and not with [recall] warm = false.
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
	var started []string
	warmOff := false
	hook := func(store string) string {
		t.Helper()
		io, in, out, errOut := term.Test()
		in.WriteString(`{"session_id":"x","cwd":"` + dir + `","hook_event_name":"UserPromptSubmit","prompt":"why does the postgres pool time out?"}`)
		opts := &Options{IO: io, Hook: "claude-code", User: "alice", Dirs: dirsOf, Cwd: func() (string, error) { return dir, nil },
			Store:     func() (string, error) { return store, nil },
			ReadStore: func(context.Context) (loom.Engine, error) { opened++; return st, nil },
			HookTime:  func() (time.Duration, error) { return time.Minute, nil },
			Started:   time.Now, Redact: secrets.Default, Version: "1.2.0",
			Warm:      func() bool { return !warmOff },
			StartWarm: func(store string) error { started = append(started, store); return nil }}
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

	// No warm recall: the hook recalls by itself, then starts one.
	cold := hook("file:loom.db")
	if opened != 1 || !slices.Equal(started, []string{"file:loom.db"}) {
		t.Fatalf("with no warm recall: opened the store %d times, started warm recalls of %q; want once, of file:loom.db", opened, started)
	}
	warmOff = true
	if hook("file:loom.db"); opened != 2 || len(started) != 1 {
		t.Fatalf("with [recall] warm = false: opened the store %d times, started warm recalls of %q; want twice, one", opened, started)
	}
	warmOff, started, opened = false, nil, 0

	// Out of time before it knew its project (a busy machine): nothing
	// printed, and the warm recall started all the same.
	{
		io, in, out, _ := term.Test()
		in.WriteString(`{"cwd":"` + dir + `","hook_event_name":"UserPromptSubmit","prompt":"postgres pool"}`)
		if err := hookRun(ctx, &Options{IO: io, Hook: "claude-code", User: "alice", Dirs: dirsOf, Cwd: func() (string, error) { return dir, nil },
			Store:     func() (string, error) { return "file:loom.db", nil },
			ReadStore: func(context.Context) (loom.Engine, error) { return st, nil },
			HookTime:  func() (time.Duration, error) { return time.Nanosecond, nil }, Started: time.Now,
			StartWarm: func(store string) error { started = append(started, store); return nil }}); err != nil || out.Len() > 0 || !slices.Equal(started, []string{"file:loom.db"}) {
			t.Fatalf("out of time at once: %v, printed %q, started warm recalls of %q; want nothing printed, one of file:loom.db", err, out, started)
		}
		started = nil
	}
	// A session's first hook starts it before its own answer, once.
	{
		io, in, out, _ := term.Test()
		in.WriteString(`{"cwd":"` + dir + `","hook_event_name":"SessionStart"}`)
		before := -1
		if err := hookRun(ctx, &Options{IO: io, Hook: "claude-code", User: "alice", Dirs: dirsOf, Cwd: func() (string, error) { return dir, nil },
			Store:     func() (string, error) { return "file:loom.db", nil },
			ReadStore: func(context.Context) (loom.Engine, error) { return st, nil },
			HookTime:  func() (time.Duration, error) { return time.Minute, nil }, Started: time.Now,
			StartWarm: func(store string) error { started, before = append(started, store), out.Len(); return nil }}); err != nil ||
			!strings.Contains(out.String(), "SessionStart") || !slices.Equal(started, []string{"file:loom.db"}) || before != 0 {
			t.Fatalf("SessionStart: %v, printed %q, started warm recalls of %q (%d bytes printed before); want one, before the answer", err, out, started, before)
		}
		started = nil
	}

	wctx, stop := context.WithCancel(ctx)
	done, err := recall.Serve(wctx, recall.WarmSocket(dirs.State, "file:loom.db"), recall.Answerer("file:loom.db", "1.2.0", st, secrets.Default))
	if err != nil {
		t.Fatal(err)
	}
	warm := hook("file:loom.db")
	if opened != 0 || len(started) != 0 || warm != cold {
		t.Fatalf("with a warm recall listening, the hook opened the store itself (%d times) or started another (%q), or answered %q, not %q", opened, started, warm, cold)
	}
	if other := hook("file:another.db"); other != warm || opened != 1 || !slices.Equal(started, []string{"file:another.db"}) {
		t.Fatalf("with a warm recall of another store: opened the store %d times, started warm recalls of %q, answered %q; want once, of file:another.db, %q",
			opened, started, other, warm)
	}
	stop()
	<-done
	// A socket left by a process that ended: no one listens on it.
	sock := recall.WarmSocket(dirs.State, "file:loom.db")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	started = nil
	if stale := hook("file:loom.db"); stale != warm || opened != 2 || !slices.Equal(started, []string{"file:loom.db"}) {
		t.Fatalf("with the warm recall stopped: opened the store %d times, started warm recalls of %q, answered %q; want twice, of file:loom.db, %q",
			opened, started, stale, warm)
	}
	// Not enabled: nothing, and no warm recall started.
	if err := setEnabled(dirsOf, p, false); err != nil {
		t.Fatal(err)
	}
	started = nil
	io, in, out, _ := term.Test()
	in.WriteString(`{"cwd":"` + dir + `","hook_event_name":"UserPromptSubmit","prompt":"postgres pool"}`)
	if err := hookRun(ctx, &Options{IO: io, Hook: "claude-code", User: "alice", Dirs: dirsOf, Cwd: func() (string, error) { return dir, nil },
		Store:     func() (string, error) { return "file:loom.db", nil },
		ReadStore: func(context.Context) (loom.Engine, error) { return st, nil },
		HookTime:  func() (time.Duration, error) { return time.Minute, nil }, Started: time.Now,
		StartWarm: func(store string) error { started = append(started, store); return nil }}); err != nil || out.Len() > 0 || len(started) > 0 {
		t.Fatalf("recall not enabled: %v, printed %q, started warm recalls of %q", err, out, started)
	}
}
