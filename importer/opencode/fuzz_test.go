package opencode

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
)

// fuzzSep separates the records of a fuzzed storage tree: the session,
// one message, then its parts.
const fuzzSep = "\x00"

// maxFuzzParts bounds the part files one input makes.
const maxFuzzParts = 16

// FuzzRead reads arbitrary bytes as opencode's records: a storage tree
// of one session, one message and its parts, separated by NUL bytes.
// The same records are the data columns of opencode.db, read by the same
// code. Reading must not panic, must end in bounded time, and whatever
// it returns must be valid loom messages.
//
// The database file itself is not fuzzed here: coverage-guided fuzzing
// finds new coverage in SQLite's engine at nearly every input and spends
// its time minimizing those. TestCorruptDB reads damaged databases
// instead.
func FuzzRead(f *testing.F) {
	storage := filepath.Join(fixture, storageDir)
	seed := func(files ...string) {
		var recs [][]byte
		for _, name := range files {
			b, err := os.ReadFile(filepath.Join(storage, filepath.FromSlash(name)))
			if err != nil {
				f.Fatal(err)
			}
			recs = append(recs, b)
		}
		f.Add(bytes.Join(recs, []byte(fuzzSep)))
	}
	parts := func(msg string) []string {
		names, err := jsonFiles(filepath.Join(storage, "part", msg))
		if err != nil || len(names) == 0 {
			f.Fatal(msg, err)
		}
		for i, n := range names {
			names[i] = "part/" + msg + "/" + n
		}
		return names
	}
	mainFile := "session/" + project + "/" + mainID + ".json"
	for _, m := range []string{
		"msg_a48fd814c0007yEeeby3abP3E2", // prompt with synthetic text and a file
		"msg_a48fd8534000c47WQAmL9xVQ2z", // tools, the task and its agent, steps
		"msg_a490d58b0000dr0UwfMpf5rg7w", // compaction summary
		"msg_a49120c98000FCH2n6WSZ1mvw4", // aborted, running tool, unknown part
	} {
		seed(append([]string{mainFile, "message/" + mainID + "/" + m + ".json"}, parts(m)...)...)
	}
	f.Add([]byte(`{"title":"t"}` + fuzzSep + `{"role":"assistant","summary":true,"error":"x"}` + fuzzSep +
		`{"type":"tool","tool":"task","state":{"status":"completed","input":null,"output":{"a":1},"metadata":{"sessionId":"ses_c"},"attachments":[{"type":"file","source":{"type":"file","text":{"start":-1,"end":1e300}}}]}}`))
	f.Add([]byte(`{"time":{"created":1e400}}` + fuzzSep + `{"role":"user"}` + fuzzSep + `[` + fuzzSep + `{"type":"text","text":5}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		recs := bytes.SplitN(data, []byte(fuzzSep), 2+maxFuzzParts)
		st := filepath.Join(dir, storageDir)
		write(t, filepath.Join(st, "session", "p", "ses_f.json"), recs[0])
		if len(recs) > 1 {
			write(t, filepath.Join(st, "message", "ses_f", "msg_f.json"), recs[1])
		}
		for i, r := range recs[min(len(recs), 2):] {
			write(t, filepath.Join(st, "part", "msg_f", "prt_"+strconv.Itoa(i)+".json"), r)
		}
		bs, err := Format{}.Bundles(context.Background(), dir)
		if err != nil || len(bs) != 1 {
			t.Fatalf("bundles: %v, %v", bs, err)
		}
		readBundles(t, bs)
	})
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readBundles reads bs within a time bound and checks that every
// message read is one loom accepts.
func readBundles(t *testing.T, bs []importer.Bundle) {
	t.Helper()
	for _, b := range bs {
		done := make(chan *importer.Result, 1)
		go func() {
			res, err := Format{}.Read(context.Background(), b)
			if err != nil {
				res = nil
			}
			done <- res
		}()
		var res *importer.Result
		select {
		case res = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("reading %s did not end", b.Name())
		}
		if res == nil {
			continue
		}
		for _, s := range res.Sessions {
			if s.SourceID == "" {
				t.Errorf("session without an id")
			}
			for _, m := range s.Messages {
				if err := m.Validate(); err != nil {
					t.Errorf("message %s: %v", m.ID, err)
				}
			}
		}
	}
}

// TestCorruptDB reads damaged copies of a database: bytes changed,
// pages cut off. Reading may fail, but must not panic or hang, and what
// it returns must be valid.
func TestCorruptDB(t *testing.T) {
	good, err := os.ReadFile(buildDB(t, t.TempDir(), schemaV12))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 300 {
		data := slices.Clone(good)
		switch i % 3 {
		case 0, 1:
			for range 1 + r.IntN(16) {
				data[len(sqliteHeader)+r.IntN(len(data)-len(sqliteHeader))] = byte(r.IntN(256))
			}
		case 2:
			data = data[:len(sqliteHeader)+r.IntN(len(data)-len(sqliteHeader))]
		}
		path := filepath.Join(t.TempDir(), dbName)
		write(t, path, data)
		readBundles(t, []importer.Bundle{{Files: []string{path}}})
	}
}
