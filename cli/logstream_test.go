package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/syncio"
	"github.com/loomhq/loom/paths"
)

// logBase is the time of the log entries these tests write.
var logBase = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

// appendLog appends entries to the log file name of dir, creating both.
func appendLog(t *testing.T, dir, name string, entries ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	for _, e := range entries {
		if _, err := fmt.Fprintln(fh, e); err != nil {
			t.Fatal(err)
		}
	}
}

// logEntryAt is a replay-log entry sec seconds after logBase.
func logEntryAt(sec int, kind, text string) string {
	return fmt.Sprintf(`{"timestamp":%q,"kind":%q,"text":%q}`, loom.FormatTime(logBase.Add(time.Duration(sec)*time.Second)), kind, text)
}

// Log stream reads the state directory's logs, or --logs-dir's, a
// relative one from the working directory; piped it prints each entry
// as its JSON line, oldest first across files, and on a terminal as one
// readable line.
func TestLogStreamRun(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	appendLog(t, filepath.Join(state, "logs", "local"), "a.jsonl", logEntryAt(1, "user_message", "a1"), logEntryAt(4, "final_result", "a4"))
	appendLog(t, filepath.Join(state, "logs", "local"), "b.jsonl", logEntryAt(2, "user_message", "b2"))
	project := t.TempDir()
	appendLog(t, filepath.Join(project, "kept", "local"), "c.jsonl", logEntryAt(3, "user_message", "c3"))
	noCwd := func() (string, error) { return "", errors.New("no working directory") }

	ios, _, _, _ := term.Test()
	opts := &LogStreamOptions{IO: ios, Dirs: func() (paths.Dirs, error) { return paths.Dirs{State: state}, nil }, Cwd: noCwd}
	if err := logStreamRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := cmdtest.Outputs(ios)
	if want := logEntryAt(1, "user_message", "a1") + "\n" + logEntryAt(2, "user_message", "b2") + "\n" + logEntryAt(4, "final_result", "a4") + "\n"; out != want {
		t.Errorf("piped:\n%s\nwant:\n%s", out, want)
	}

	ios, _, _, _ = term.Test()
	ios.SetStdoutTTY(true)
	ios.SetColorEnabled(false)
	opts = &LogStreamOptions{IO: ios, LogsDir: "kept", Cwd: func() (string, error) { return project, nil },
		Dirs: func() (paths.Dirs, error) { return paths.Dirs{}, errors.New("no directories") }}
	if err := logStreamRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ = cmdtest.Outputs(ios)
	if want := logBase.Add(3*time.Second).Local().Format("15:04:05.000") + " c user_message c3\n"; out != want {
		t.Errorf("--logs-dir kept on a terminal: %q, want %q", out, want)
	}
}

// --follow prints what is appended to the logs and what new files hold,
// a line only once it is whole, until it is interrupted, which is no
// error.
func TestLogStreamRunFollow(t *testing.T) {
	t.Parallel()
	logs := filepath.Join(t.TempDir(), "local")
	appendLog(t, logs, "a.jsonl", logEntryAt(1, "user_message", "a1"), logEntryAt(4, "final_result", "a4"))
	ios, _, _, _ := term.Test()
	sb := &syncio.Buffer{}
	ios.Out = sb
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- logStreamRun(ctx, &LogStreamOptions{IO: ios, LogsDir: logs, Follow: true, Poll: 10 * time.Millisecond})
	}()
	cmdtest.WaitFor(t, sb, "a4")
	appendLog(t, logs, "a.jsonl", logEntryAt(5, "session:end", "a5"))
	// A line still being written is held back until it is whole.
	fh, err := os.OpenFile(filepath.Join(logs, "c.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	line := logEntryAt(6, "user_message", "c6")
	fh.WriteString(line[:10])
	// A whole line in a file read after c.jsonl: once it is printed, a
	// poll has read the half line too.
	appendLog(t, logs, "d.jsonl", logEntryAt(7, "user_message", "d7"))
	cmdtest.WaitFor(t, sb, "d7")
	if got := sb.String(); strings.Count(got, "\n") != 4 || !strings.HasSuffix(got, "}\n") || !strings.Contains(got, "a5") {
		t.Fatalf("half a line printed:\n%s", got)
	}
	fh.WriteString(line[10:] + "\n")
	cmdtest.WaitFor(t, sb, "c6")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v", err)
	}
	if n := strings.Count(sb.String(), "\n"); n != 5 {
		t.Fatalf("follow printed %d entries:\n%s", n, sb.String())
	}
}

// The command fills its options from its flags; it takes no arguments.
func TestNewCmdLogStreamOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdLogStream)
	if got.Follow || got.LogsDir != "" || got.Poll != 250*time.Millisecond || got.Dirs == nil || got.Cwd == nil {
		t.Errorf("options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdLogStream, "-F", "--logs-dir", "/srv/loom/state/logs"); !got.Follow || got.LogsDir != "/srv/loom/state/logs" {
		t.Errorf("-F --logs-dir: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdLogStream, "a.jsonl"), "takes no arguments")
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdLogStream, "--follow=maybe"), "--follow")
}
