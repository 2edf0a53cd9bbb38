package warp

import (
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// FuzzQuery reads arbitrary text as a query's input: no panic.
func FuzzQuery(f *testing.F) {
	f.Add(`[{"Query":{"text":"hi"}}]`)
	f.Fuzz(func(t *testing.T, s string) {
		_ = query(s)
		_ = stamp(s)
	})
}

// FuzzTask reads arbitrary bytes as a task of agent_tasks: no panic, a
// valid transcript.
func FuzzTask(f *testing.F) {
	f.Add(pb(1, "t", 5, msg("m", 1772532000, 2, pb(1, "hi"))))
	f.Add(pb(1, "t", 5, msg("m", 1, 4, pb(1, "c", 2, pb(1, "ls"))), 5, msg("n", 2, 5, pb(1, "c", 2, pb(5, pb(1, "out"))))))
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, ok := decodeTask(b)
		if !ok {
			return
		}
		res := &importer.Result{}
		tr := &importer.Transcript{Res: res}
		transcript(tr, tk, time.Unix(0, 0), res, func(string) string { return "" })
		if s := tr.Session("w", "warp.sqlite"); s != nil {
			importertest.CheckValid(t, &importer.Result{Sessions: []*importer.Session{s}})
		}
	})
}
