package goose

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzRead reads arbitrary bytes as goose's messages: the content JSON
// of a sessions.db row (and of a JSONL line), with its metadata, as a
// conversation of several messages separated by NUL bytes, each
// starting with its role's letter (u or a) and its metadata before a
// tab. The mapping is the same for both stores; the database file
// itself is SQLite's and read by importer.OpenSQLite, which opencode's
// TestCorruptDB covers, and a JSONL file is read as one too. Reading
// must not panic, must end in bounded time, and whatever it returns must
// be valid loom messages.
func FuzzRead(f *testing.F) {
	var seed [][]byte
	for _, m := range conversation {
		seed = append(seed, []byte(m.role[:1]+m.metadata+"\t"+m.content))
	}
	for i := 0; i < len(seed); i += 3 {
		f.Add(bytes.Join(seed[i:min(i+4, len(seed))], []byte{0}))
	}
	data := importertest.ReadBytes(f, filepath.Join("testdata", "20250301_101500.jsonl"))
	f.Add(append([]byte("j"), data...))
	f.Add([]byte("a\t[{\"type\":\"toolRequest\",\"id\":\"\",\"toolCall\":{\"status\":\"success\",\"value\":{\"name\":\"x\",\"arguments\":[1]}}}]\x00u{\"userVisible\":false}\t[{\"type\":\"toolResponse\",\"id\":\"a/0\",\"toolResult\":{\"status\":\"success\",\"value\":\"x\"}}]"))

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 && data[0] == 'j' {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			importertest.WriteFile(t, path, data[1:], 0o644)
			done := make(chan *importer.Result, 1)
			go func() {
				res, _ := Format{}.Read(context.Background(), importer.Bundle{Files: []string{path}})
				done <- res
			}()
			select {
			case res := <-done:
				if res != nil {
					importertest.Check(t, res)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("reading did not end")
			}
			return
		}
		res := &importer.Result{}
		c := newConv(res, "m", "p")
		for i, rec := range bytes.SplitN(data, []byte{0}, 64) {
			s := source{ID: "m" + string(rune('a'+i)), Role: "assistant", Created: time.Unix(1763632800, 0), File: "f"}
			if len(rec) > 0 && rec[0] == 'u' {
				s.Role = "user"
			}
			meta, content, ok := bytes.Cut(rec, []byte{'\t'})
			if ok && len(meta) > 1 {
				_ = jsonUnmarshal(meta[1:], &s.Meta)
			}
			s.Content = content
			c.add(s)
		}
		importertest.Check(t, &importer.Result{Sessions: []*importer.Session{{SourceID: "s", Messages: c.finish(usage(nil, nil, nil, nil))}}})
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
