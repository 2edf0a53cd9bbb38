package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/clitest"
	"github.com/loomhq/loom/internal/syncio"
)

func TestLogStream(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	logs := filepath.Join(fx.Home, "state", "logs", "local")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, entries ...string) {
		t.Helper()
		fh, err := os.OpenFile(filepath.Join(logs, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			fmt.Fprintln(fh, e)
		}
		fh.Close()
	}
	entry := func(sec int, kind, text string) string {
		return fmt.Sprintf(`{"timestamp":%q,"kind":%q,"text":%q}`, loom.FormatTime(clitest.Base.Add(time.Duration(sec)*time.Second)), kind, text)
	}
	write("a.jsonl", entry(1, "user_message", "a1"), entry(4, "final_result", "a4"))
	write("b.jsonl", entry(2, "user_message", "b2"), entry(3, "final_result", "b3"))
	os.WriteFile(filepath.Join(logs, "notes.txt"), []byte("not a log\n"), 0o644)
	out := fx.MustRun(t, "log", "stream")
	var texts []string
	for _, l := range clitest.Lines(out) {
		var e map[string]string
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("piped entry is not its JSON line: %q", l)
		}
		texts = append(texts, e["text"])
	}
	if strings.Join(texts, ",") != "a1,b2,b3,a4" {
		t.Fatalf("entries not merged oldest first: %v", texts)
	}
	r := fx.RunWith(t, clitest.RunOpts{Tty: true}, "log", "stream")
	if !strings.Contains(ansi.Strip(r.Stdout), "a user_message a1") {
		t.Fatalf("terminal log line:\n%s", r.Stdout)
	}
	if out := fx.MustRun(t, "log", "stream", "--logs-dir", filepath.Join(fx.Home, "nowhere")); out != "" {
		t.Fatalf("missing logs dir printed %q", out)
	}

	// --follow prints what is appended and what new files hold.
	ios, _, _, _ := term.Test()
	sb := &syncio.Buffer{}
	ios.Out = sb
	f := &cli.Factory{IO: ios, Env: func(k string) string { return fx.Env()[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cli.LogStreamRun(ctx, &cli.LogStreamOptions{IO: f.IO, Dirs: f.Dirs, Cwd: f.Cwd, Follow: true, Poll: 10 * time.Millisecond})
	}()
	clitest.WaitFor(t, sb, "a4")
	write("a.jsonl", entry(5, "session:end", "a5"))
	// A line still being written is held back until it is whole.
	fh, _ := os.OpenFile(filepath.Join(logs, "c.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	line := entry(6, "user_message", "c6")
	fh.WriteString(line[:10])
	// A whole line in a file read after c.jsonl: once it is printed, a
	// poll has read the half line too.
	write("d.jsonl", entry(7, "user_message", "d7"))
	clitest.WaitFor(t, sb, "d7")
	if got := sb.String(); strings.Count(got, "\n") != 6 || !strings.HasSuffix(got, "}\n") || !strings.Contains(got, "a5") {
		t.Fatalf("half a line printed:\n%s", got)
	}
	fh.WriteString(line[10:] + "\n")
	fh.Close()
	clitest.WaitFor(t, sb, "c6")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v", err)
	}
	if n := strings.Count(sb.String(), "\n"); n != 7 {
		t.Fatalf("follow printed %d entries:\n%s", n, sb.String())
	}
}
