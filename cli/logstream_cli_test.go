package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
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
}
