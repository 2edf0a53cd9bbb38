package sessionstore_test

import (
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/sessionstore"
)

// A part update that puts redaction markers where other text was
// replaces text; one that only adds to a part, keeps a marker it had,
// or finishes a tool does not.
func TestReplacesText(t *testing.T) {
	if sessionstore.RedactedMarker != secrets.MarkerPrefix {
		t.Fatalf("sessionstore.RedactedMarker %q is not the detector's marker %q", sessionstore.RedactedMarker, secrets.MarkerPrefix)
	}
	d := secrets.Default()
	running := loom.Part{ID: "p", Type: loom.PartTool, Status: loom.ToolRunning, Input: []byte(`{"command":"export AWS_KEY=AKIAQYLPMN5HHHFPZAM7"}`)}
	done := running
	done.Status, done.Output = loom.ToolCompleted, []byte(`"ok"`)
	redacted, n := d.RedactPart(done)
	text := loom.Part{ID: "t", Type: loom.PartText, Text: "the key AKIAQYLPMN5HHHFPZAM7"}
	redText, _ := d.RedactPart(text)
	for _, c := range []struct {
		name     string
		from, to loom.Part
		want     bool
	}{
		{"a tool finishing", running, done, false},
		{"a tool's input redacted", done, redacted, true},
		{"a text redacted", text, redText, true},
		{"the same redacted part again", redText, redText, false},
		{"a finished tool whose redacted input stays", redacted, func() loom.Part { p := redacted; p.Output = []byte(`"more"`); return p }(), false},
	} {
		if n == 0 {
			t.Fatal("the detector found nothing to redact")
		}
		if got := sessionstore.ReplacesText(c.from, c.to); got != c.want {
			t.Errorf("%s: ReplacesText = %v, want %v", c.name, got, c.want)
		}
	}
}
