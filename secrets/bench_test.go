package secrets_test

import (
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/cputime"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/secrets/secretstest"
)

// benchMessages makes n messages of secretstest's workload over this
// repository's code.
func benchMessages(tb testing.TB, n int) []*loom.Message {
	w, err := secretstest.NewWorkload("../*.go", 9)
	if err != nil {
		tb.Fatal(err)
	}
	msgs := make([]*loom.Message, n)
	for i := range msgs {
		msgs[i] = w.Message(i)
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
	cpu0 := cputime.Used()
	found := 0
	for i := 0; i < b.N; i++ {
		found += len(d.ScanMessage(msgs[i%len(msgs)]))
	}
	// On a shared machine the wall time counts the waits for a core;
	// the process's CPU time is what the scan costs.
	b.ReportMetric(float64(cputime.Used()-cpu0)/float64(b.N), "cpu-ns/op")
	if found == 0 && b.N > 100 {
		b.Fatal("found nothing")
	}
}

// BenchmarkRedactRead is the redaction of one read of 100 messages
// (RedactMessages, as a share or a gate's read): the detector over each,
// then the repeats of the values found replaced in all. ns/op is per
// message.
func BenchmarkRedactRead(b *testing.B) {
	msgs := benchMessages(b, 3000)
	d := secrets.Default()
	batch := make([]*loom.Message, 100)
	b.ResetTimer()
	cpu0 := cputime.Used()
	for i := 0; i < b.N; i += len(batch) {
		for k := range batch {
			batch[k] = msgs[(i+k)%len(msgs)]
		}
		d.RedactMessages(batch)
	}
	b.ReportMetric(float64(cputime.Used()-cpu0)/float64(b.N), "cpu-ns/op")
}
