package importer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/sqlite"
)

// An import whose files are read and parsed on many workers stores
// what one reading them in turn stores, byte for byte: the same rows
// of sessions and messages in the same order, with the same ids and
// times, and reports the same problems (one line for the bad file).
func TestParallelImportEqualsSerial(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOOM_TEST_AHEAD_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (LOOM_TEST_AHEAD_SEED=%d replays it)", seed, seed)
	gen := t.TempDir()
	writeClaudeSessions(t, gen, rand.New(rand.NewPCG(seed, 108)), 120)
	if err := os.WriteFile(filepath.Join(gen, "-home-dev-bad", "0bad.jsonl"), []byte("not json at all\n{\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	targets := []importer.Target{
		{Format: claudecode.New(), Roots: []string{copyTree(t, filepath.Join(agentSessions, "claude-code")), copyTree(t, "claudecode/testdata"), gen}, Explicit: true},
		{Format: codex.Format{}, Roots: []string{copyTree(t, filepath.Join(agentSessions, "codex")), copyTree(t, "codex/testdata")}, Explicit: true},
		{Format: gemini.Format{}, Roots: []string{copyTree(t, filepath.Join(agentSessions, "gemini"))}, Explicit: true},
	}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	run := func(workers int) (string, string) {
		st := importertest.Store(t)
		im := &importer.Importer{Store: st, UserID: "alice", Workers: workers, Now: func() time.Time { return now }}
		rep, err := im.Run(context.Background(), targets)
		if err != nil {
			t.Fatal(err)
		}
		var tools []string
		for _, tr := range rep.Tools {
			tr.Elapsed, tr.DurationMS = 0, 0
			b, err := json.Marshal(tr)
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, string(b))
		}
		return strings.Join(tools, "\n"), dumpRows(t, st, "sessions", "messages", "bodies", "originals", "edits", "import_files")
	}
	serialRep, serial := run(1)
	if !strings.Contains(serialRep, "0bad.jsonl") {
		t.Fatalf("the bad file is not reported:\n%s", serialRep)
	}
	if strings.Count(serial, "\n") < 500 {
		t.Fatalf("only %d rows imported", strings.Count(serial, "\n"))
	}
	for _, workers := range []int{2, 8} {
		rep, got := run(workers)
		if rep != serialRep {
			t.Errorf("%d workers reported\n%s\nreading in turn\n%s", workers, rep, serialRep)
		}
		if got != serial {
			g, w := strings.Split(got, "\n"), strings.Split(serial, "\n")
			for i := range min(len(g), len(w)) {
				if g[i] != w[i] {
					j := 0
					for j < min(len(g[i]), len(w[i])) && g[i][j] == w[i][j] {
						j++
					}
					t.Fatalf("%d workers: row %d differs at %d:\n got %.600s\nwant %.600s", workers, i, j, g[i][max(0, j-300):], w[i][max(0, j-300):])
				}
			}
			t.Fatalf("%d workers: %d rows, reading in turn %d", workers, len(g), len(w))
		}
	}
}

// dumpRows is every row of the tables, in the order the store keeps
// them, one line each.
func dumpRows(t *testing.T, st *sqlite.Store, tables ...string) string {
	t.Helper()
	var b strings.Builder
	for _, table := range tables {
		rows, err := st.DB().Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s", table)
			for i, v := range vals {
				if cols[i] == "kept_at" || cols[i] == "imported_at" {
					continue // when a chunk was kept or a file recorded is the clock's, not the run's Now
				}
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, " %s=%v", cols[i], v)
			}
			b.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// writeClaudeSessions writes n small Claude Code sessions under dir, in
// projects' directories as Claude Code keeps them.
func writeClaudeSessions(t *testing.T, dir string, rng *rand.Rand, n int) {
	t.Helper()
	uuid := func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff)
	}
	words := strings.Fields("read the file then change its tests and run them again until every case passes")
	text := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	at := time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC)
	for i := range n {
		cwd := fmt.Sprintf("/home/dev/p%d", i%7)
		sid := uuid()
		var lines []string
		parent := "null"
		line := func(typ string, message any) {
			id := uuid()
			m, _ := json.Marshal(message)
			lines = append(lines, fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":%q,"sessionId":%q,"version":"2.1.39","type":%q,"message":%s,"uuid":%q,"timestamp":%q}`,
				parent, cwd, sid, typ, m, id, at.Format("2006-01-02T15:04:05.000Z")))
			parent = `"` + id + `"`
			at = at.Add(time.Duration(1+rng.IntN(20)) * time.Second)
		}
		for range 1 + rng.IntN(4) {
			line("user", map[string]any{"role": "user", "content": text(3 + rng.IntN(20))})
			line("assistant", map[string]any{"model": "claude-sonnet-4-5", "id": "msg_" + uuid(), "type": "message", "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": text(5 + rng.IntN(40))}}, "stop_reason": "end_turn",
				"usage": map[string]int{"input_tokens": rng.IntN(500), "output_tokens": rng.IntN(400)}})
		}
		p := filepath.Join(dir, "-home-dev-p"+strconv.Itoa(i%7), sid+".jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "-home-dev-bad"), 0o700); err != nil {
		t.Fatal(err)
	}
}

// blocking is Claude Code's format whose reading waits for the run to
// be cancelled, counting the readings under way.
type blocking struct {
	importer.Format
	started chan struct{}
	reading atomic.Int64
}

func (b *blocking) Read(ctx context.Context, bd importer.Bundle) (*importer.Result, error) {
	b.reading.Add(1)
	defer b.reading.Add(-1)
	select {
	case b.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// A cancelled import stops the workers reading ahead: the run returns
// the cancellation, and no reading is under way once it has.
func TestCancelledImportStopsTheWorkers(t *testing.T) {
	gen := t.TempDir()
	writeClaudeSessions(t, gen, rand.New(rand.NewPCG(1, 2)), 40)
	f := &blocking{Format: claudecode.New(), started: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	im := &importer.Importer{Store: importertest.Store(t), UserID: "alice", Workers: 4}
	done := make(chan error, 1)
	go func() {
		_, err := im.Run(ctx, []importer.Target{{Format: f, Roots: []string{gen}, Explicit: true}})
		done <- err
	}()
	<-f.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("run returned %v, want the cancellation", err)
	}
	if n := f.reading.Load(); n != 0 {
		t.Fatalf("%d readings still under way after the run returned", n)
	}
}
