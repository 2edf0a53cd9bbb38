package export_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/export"
)

// FuzzRead feeds Read anything: it must never panic, must refuse with a
// coded EINVALID error what it cannot read, and what it reads must
// write out and read back to the same export.
//
//	go test ./export -run '^$' -fuzz FuzzRead -fuzztime 5m -fuzzminimizetime 10s
//
// (Minimizing each new input for the default minute leaves little time
// to fuzz: the inputs are whole exports.)
func FuzzRead(f *testing.F) {
	for _, format := range []export.Format{export.JSONL, export.JSON} {
		var b bytes.Buffer
		if err := export.Write(&b, format, sample()); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Add([]byte(`{"type":"session","session":{"id":"s","created_at":"2025-05-01T10:00:00Z","updated_at":"2025-05-01T10:00:00Z"}}`))
	f.Add([]byte(`{"version":1,"sessions":[{"session":null,"messages":[null]}]}`))
	f.Add([]byte("\xef\xbb\xbf\n{\"type\":\"message\"}"))
	f.Fuzz(func(t *testing.T, content []byte) {
		opts := export.ReadOptions{Name: "fuzz", UserID: "fuzzer"}
		data, err := export.Read(bytes.NewReader(content), opts)
		if err != nil {
			if loom.ErrorCode(err) != loom.EINVALID || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q (%s): want one line coded %s", err, loom.ErrorCode(err), loom.EINVALID)
			}
			return
		}
		var first bytes.Buffer
		if err := export.Write(&first, export.JSONL, data); err != nil {
			t.Fatalf("write what was read: %v", err)
		}
		again, err := export.Read(bytes.NewReader(first.Bytes()), opts)
		if err != nil {
			t.Fatalf("read what was written: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if err := export.Write(&second, export.JSONL, again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("write → read → write differs:\n%s\n---\n%s", first.Bytes(), second.Bytes())
		}
	})
}
