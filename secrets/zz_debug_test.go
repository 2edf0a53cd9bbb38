package secrets_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/realcorpus"
)

func TestZZDump(t *testing.T) {
	want := os.Getenv("DUMP")
	if want == "" {
		t.Skip()
	}
	d := secrets.Default()
	n := 0
	for _, s := range realcorpus.SecretCorpus(realSeed) {
		red, _ := d.RedactMessage(s.Msg)
		if len(s.Leaks(red)) == 0 || !strings.Contains(s.Kind+"/"+s.Carrier, want) {
			continue
		}
		n++
		if n > 4 {
			break
		}
		var b, r strings.Builder
		for i, p := range s.Msg.Parts {
			b.WriteString(p.Text + loom.JSONText(p.Input) + "\n" + loom.JSONText(p.Output))
			if p.Source != nil {
				b.WriteString(p.Source.Text)
			}
			q := red.Parts[i]
			r.WriteString(q.Text + loom.JSONText(q.Input) + "\n" + loom.JSONText(q.Output))
			if q.Source != nil {
				r.WriteString(q.Source.Text)
			}
		}
		fmt.Printf("=== %s / %s\n%s\n--- redacted:\n%s\n--- leaks: %v\n", s.Kind, s.Carrier, b.String(), r.String(), realcorpus.HintAll(s.Leaks(red)))
	}
}
