package crush

import (
	"bytes"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzConvert reads arbitrary bytes as the parts columns of a session's
// messages, separated by NUL bytes, each starting with its role's letter
// (u, a, t for tool, s). The database itself is SQLite's, read by
// importer.OpenSQLite. Reading must not panic and whatever it returns
// must be valid loom messages.
func FuzzConvert(f *testing.F) {
	roles := map[string]byte{"user": 'u', "assistant": 'a', "tool": 't', "system": 's'}
	var seed [][]byte
	for _, r := range conversation {
		seed = append(seed, append([]byte{roles[r.role]}, r.parts...))
	}
	for i := 0; i < len(seed); i += 3 {
		f.Add(bytes.Join(seed[i:min(i+4, len(seed))], []byte{0}))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := &importer.Result{}
		c := newConverter(res, "f")
		for i, rec := range bytes.SplitN(data, []byte{0}, 64) {
			r := record{ID: "m" + string(rune('a'+i)), Role: "assistant", Created: time.Unix(1763632800, 0)}
			if len(rec) > 0 {
				switch rec[0] {
				case 'u':
					r.Role = "user"
				case 't':
					r.Role = "tool"
				case 's':
					r.Role = "system"
				}
				rec = rec[1:]
			}
			r.Parts = rec
			c.add(r)
		}
		c.linkAgent("call_2", "sub")
		s := &importer.Session{SourceID: "s", Messages: c.finish(loom.Usage{InputTokens: 1})}
		importertest.CheckValidOf(t, Tool, &importer.Result{Sessions: []*importer.Session{s}})
	})
}
