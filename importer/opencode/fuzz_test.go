package opencode

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// fuzzSep separates the records of a fuzzed storage tree: the session,
// one message, then its parts.
const fuzzSep = "\x00"

// maxFuzzParts bounds the part files one input makes.
const maxFuzzParts = 16

// FuzzRead reads arbitrary bytes as opencode's records: one session,
// one message and its parts, separated by NUL bytes, read by the tree's
// reader from memory (the files themselves are read by code the other
// tests cover). The same records are the data columns of opencode.db,
// read by the same decoding and mapping. Reading must not panic, must
// end in bounded time, and whatever it returns must be valid loom
// messages.
//
// The database file itself is not fuzzed here: coverage-guided fuzzing
// finds new coverage in SQLite's engine at nearly every input and spends
// its time minimizing those. TestCorruptDB reads damaged databases
// instead.
func FuzzRead(f *testing.F) {
	// Seeds: the fixture's records, compacted and a few parts at a time,
	// since the fuzzer minimizes every input that finds new coverage and
	// minimizing takes time in proportion to the input's size.
	storage := filepath.Join(fixture, storageDir)
	record := func(name string) []byte {
		data := importertest.ReadBytes(f, filepath.Join(storage, filepath.FromSlash(name)))
		var b bytes.Buffer
		if err := json.Compact(&b, data); err != nil {
			f.Fatal(name, err)
		}
		return b.Bytes()
	}
	session := record("session/" + project + "/" + mainID + ".json")
	for _, m := range []string{
		"msg_a48fd814c0007yEeeby3abP3E2", // prompt with synthetic text and a file
		"msg_a48fd8534000c47WQAmL9xVQ2z", // tools, the task and its agent, steps
		"msg_a490d58b0000dr0UwfMpf5rg7w", // compaction summary
		"msg_a49120c98000FCH2n6WSZ1mvw4", // aborted, running tool, unknown part
	} {
		msg := record("message/" + mainID + "/" + m + ".json")
		names, err := jsonFiles(filepath.Join(storage, "part", m))
		if err != nil || len(names) == 0 {
			f.Fatal(m, err)
		}
		for chunk := range slices.Chunk(names, 3) {
			recs := [][]byte{session, msg}
			for _, n := range chunk {
				recs = append(recs, record("part/"+m+"/"+n))
			}
			f.Add(bytes.Join(recs, []byte(fuzzSep)))
		}
	}
	// And what opencode itself wrote: each message of the real database
	// with its parts.
	db, err := sql.Open(driverName, "file:"+realDB+"?mode=ro")
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT m.data, group_concat(p.data, ?) FROM message m JOIN part p ON p.message_id = m.id GROUP BY m.id ORDER BY m.id", fuzzSep)
	if err != nil {
		f.Fatal(err)
	}
	for rows.Next() {
		var msg, parts string
		if err := rows.Scan(&msg, &parts); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(`{"title":"t"}` + fuzzSep + msg + fuzzSep + parts))
	}
	if err := rows.Err(); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"title":"t"}` + fuzzSep + `{"role":"assistant","summary":true,"error":"x"}` + fuzzSep +
		`{"type":"tool","tool":"task","state":{"status":"completed","input":null,"output":{"a":1},"metadata":{"sessionId":"ses_c"},"attachments":[{"type":"file","source":{"type":"file","text":{"start":-1,"end":1e300}}}]}}`))
	f.Add([]byte(`{"time":{"created":1e400}}` + fuzzSep + `{"role":"user"}` + fuzzSep + `[` + fuzzSep + `{"type":"text","text":5}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		recs := bytes.SplitN(data, []byte(fuzzSep), 2+maxFuzzParts)
		files := map[string][]byte{}
		b := importer.Bundle{}
		add := func(name string, rec []byte) {
			name = filepath.FromSlash(name)
			files[name] = rec
			b.Files = append(b.Files, name)
		}
		add("/d/storage/session/p/ses_f.json", recs[0])
		if len(recs) > 1 {
			add("/d/storage/message/ses_f/msg_f.json", recs[1])
		}
		for i, r := range recs[min(len(recs), 2):] {
			add("/d/storage/part/msg_f/prt_"+strconv.Itoa(i)+".json", r)
		}
		read := func(name string) ([]byte, error) {
			if d, ok := files[name]; ok {
				return d, nil
			}
			return nil, os.ErrNotExist
		}
		res, err := readTree(context.Background(), b, read)
		if err != nil {
			t.Fatal(err)
		}
		importertest.Check(t, res)
	})
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	importertest.MkdirAll(t, filepath.Dir(path))
	importertest.WriteFile(t, path, data, 0o644)
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
		if res != nil {
			importertest.Check(t, res)
		}
	}
}

// TestCorruptDB reads damaged copies of a database: bytes changed,
// pages cut off. Reading may fail, but must not panic or hang, and what
// it returns must be valid.
func TestCorruptDB(t *testing.T) {
	good := importertest.ReadBytes(t, buildDB(t, t.TempDir(), schemaV12))
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 300 {
		data := slices.Clone(good)
		switch i % 3 {
		case 0, 1:
			for range 1 + r.IntN(16) {
				data[len("SQLite format 3\x00")+r.IntN(len(data)-len("SQLite format 3\x00"))] = byte(r.IntN(256))
			}
		case 2:
			data = data[:len("SQLite format 3\x00")+r.IntN(len(data)-len("SQLite format 3\x00"))]
		}
		path := filepath.Join(t.TempDir(), opencodeApp.db)
		write(t, path, data)
		readBundles(t, []importer.Bundle{{Files: []string{path}}})
	}
}
