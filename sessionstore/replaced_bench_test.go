package sessionstore_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sessionstore"
)

// What applying an ordinary part update (a tool that finished, 4 KiB of
// output) pays to tell it from a redaction's.
func BenchmarkReplacesText(b *testing.B) {
	running := loom.Part{ID: "p", Type: loom.PartTool, Status: loom.ToolRunning, Input: []byte(`{"command":"go test ./..."}`)}
	done := running
	done.Status, done.Output = loom.ToolCompleted, []byte(`"`+strings.Repeat("ok  \tgithub.com/loomhq/loom/x\t0.1s\\n", 128)+`"`)
	for b.Loop() {
		if sessionstore.ReplacesText(running, done) {
			b.Fatal("a tool finishing replaces text")
		}
	}
}
