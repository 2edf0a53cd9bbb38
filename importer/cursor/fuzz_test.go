package cursor

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

// FuzzRead reads arbitrary bytes as a transcript of the CLI (JSONL, or
// the text form when the first byte is 't') and, when the first byte is
// 'b', as the editor's bubbles, one JSON value a line. The editor's
// database itself is SQLite's, read by importer.OpenSQLite. Reading must
// not panic, must end, and whatever it returns must be valid loom
// messages.
func FuzzRead(f *testing.F) {
	for _, name := range []string{
		filepath.Join(projects, "home-u-app", transcriptsDir, mainID, mainID+".jsonl"),
		filepath.Join(projects, "home-u-app", transcriptsDir, textID+".txt"),
	} {
		data := importertest.ReadBytes(f, name)
		if filepath.Ext(name) == ".txt" {
			data = append([]byte("t"), data...)
		}
		f.Add(data)
	}
	var bubbles []byte
	for _, b := range editorBubbles {
		j, _ := json.Marshal(b)
		bubbles = append(append(bubbles, j...), '\n')
	}
	f.Add(append([]byte("b"), bubbles...))

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 && data[0] == 'b' {
			res := &importer.Result{}
			s := &importer.Session{SourceID: "s"}
			seen := map[string]bool{}
			_ = importer.Lines(context.Background(), bytesReader(data[1:]), func(n int, line []byte) error {
				var b bubble
				if json.Unmarshal(line, &b) != nil || b.BubbleID == "" || seen[b.BubbleID] {
					return nil
				}
				seen[b.BubbleID] = true
				if m := bubbleMessage(res, b, "m", time.Unix(1763632800, 0)); m != nil {
					s.Messages = append(s.Messages, m)
				}
				return nil
			}, func(int) {})
			importertest.CheckValidOf(t, Tool, &importer.Result{Sessions: []*importer.Session{s}})
			return
		}
		name := "s.jsonl"
		if len(data) > 0 && data[0] == 't' {
			name, data = "s.txt", data[1:]
		}
		importertest.FuzzOneFile(t, Format{}, name, data)
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
