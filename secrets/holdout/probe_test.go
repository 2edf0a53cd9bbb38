package holdout_test

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom/secrets"
)

// TestHoldoutProbe prints what the detector finds in each block of the
// file HOLDOUT_PROBE (blocks separated by lines "----"; \n and \r
// escapes in a block are decoded when it starts with "~").
func TestHoldoutProbe(t *testing.T) {
	p := os.Getenv("HOLDOUT_PROBE")
	if p == "" {
		t.Skip("HOLDOUT_PROBE not set")
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	d := secrets.Default()
	var blocks []string
	var cur []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if sc.Text() == "----" {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, sc.Text())
	}
	blocks = append(blocks, strings.Join(cur, "\n"))
	for _, b := range blocks {
		if strings.HasPrefix(b, "~") {
			b = strings.NewReplacer(`\n`, "\n", `\r`, "\r", `\t`, "\t").Replace(b[1:])
		}
		var fs []string
		for _, x := range d.Find(b) {
			fs = append(fs, fmt.Sprintf("%s«%s»", x.RuleID, b[x.Start:x.End]))
		}
		fmt.Printf("%-70q => %v\n", b[:min(70, len(b))], fs)
	}
}
