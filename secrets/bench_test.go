package secrets_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
)

// benchMessages makes n messages as sessions hold them: a prompt, a
// reply, and tool calls whose output is a chunk of this repository's
// code (about 2 KB); one message in fifty carries a fake secret.
func benchMessages(tb testing.TB, n int) []*loom.Message {
	files, _ := filepath.Glob("../*.go")
	var code []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		code = append(code, b...)
	}
	g := secretstest.New(9)
	msgs := make([]*loom.Message, n)
	for i := range msgs {
		off := (i * 2048) % (len(code) - 2048)
		chunk := string(code[off : off+2048])
		m := &loom.Message{ID: loom.NewID(), Seq: int64(i + 1), Role: loom.RoleAssistant}
		switch i % 3 {
		case 0:
			m.Role = loom.RoleUser
			m.Parts = []loom.Part{{ID: "p", Type: loom.PartText, Text: "Why does the export fail on the damaged store? Look at load.go and fix the salvage path."}}
		case 1:
			m.Parts = []loom.Part{{ID: "p", Type: loom.PartText, Text: chunk[:600]}}
		default:
			out, _ := json.Marshal(chunk)
			m.Parts = []loom.Part{{ID: "p", Type: loom.PartTool, CallID: "c", Name: "read", Status: loom.ToolCompleted,
				Input: json.RawMessage(`{"path":"store.go"}`), Output: out}}
		}
		if i%50 == 0 {
			m.Parts[0].Text += "\n" + g.Secret(secretstest.Kinds[i/50%len(secretstest.Kinds)]).Text
		}
		msgs[i] = m
	}
	return msgs
}

// BenchmarkScanMessages is the detector's part of `loom secrets scan`:
// ns/op is the time per message, so 1,000,000 messages take ns/op
// milliseconds.
func BenchmarkScanMessages(b *testing.B) {
	msgs := benchMessages(b, 3000)
	d := secrets.Default()
	b.ResetTimer()
	cpu0 := cpuTime()
	found := 0
	for i := 0; i < b.N; i++ {
		found += len(d.ScanMessage(msgs[i%len(msgs)]))
	}
	// On a shared machine the wall time counts the waits for a core;
	// the process's CPU time is what the scan costs.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	if found == 0 && b.N > 100 {
		b.Fatal("found nothing")
	}
}

// cpuTime is the CPU time this process has used, user and system, in
// nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
