package gemini

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
)

// realRecording is a real Gemini CLI recording (JSONL form); its header
// and messages give the shape of the big one-document recording below.
var realRecording = filepath.Join("..", "..", "testdata", "agent-sessions", "gemini", "vibecodingtracker-gemini.jsonl")

// writeDocument writes the real recording's messages, repeated reps
// times with ids of their own, as the one-document recording Gemini CLI
// writes (indented by two spaces), to file. It returns the file's size.
func writeDocument(t *testing.T, file string, reps int) int64 {
	t.Helper()
	raw, err := os.ReadFile(realRecording)
	if err != nil {
		t.Fatal(err)
	}
	var hdr map[string]any
	var order []string
	msgs := map[string]map[string]any{}
	for i, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		id, _ := v["id"].(string)
		switch {
		case i == 0:
			hdr = v
		case id != "":
			// Gemini CLI writes a message again as it grows; the
			// document holds its last form where it first appeared.
			if msgs[id] == nil {
				order = append(order, id)
			}
			msgs[id] = v
		}
	}
	// Each message is indented once, its id a mark filled in per copy.
	var tmpl [][]byte
	for _, id := range order {
		m := msgs[id]
		m["id"] = "@ID@"
		b, err := json.MarshalIndent(m, "    ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		tmpl = append(tmpl, b)
	}
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	hdr["messages"] = "@MESSAGES@"
	head, err := json.MarshalIndent(hdr, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	before, after, _ := bytes.Cut(head, []byte(`"@MESSAGES@"`))
	w.Write(before)
	w.WriteString("[")
	for r := range reps {
		for i, b := range tmpl {
			if r > 0 || i > 0 {
				w.WriteString(",")
			}
			w.WriteString("\n    ")
			w.Write(bytes.Replace(b, []byte("@ID@"), fmt.Appendf(nil, "%s-%d", order[i], r), 1))
		}
	}
	w.WriteString("\n  ]")
	w.Write(after)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// readMessages reads file and counts the messages of its sessions.
func readMessages(t *testing.T, file string) (int, *importer.Session) {
	t.Helper()
	res, err := Format{}.Read(context.Background(), importer.Bundle{Files: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions read, want 1", len(res.Sessions))
	}
	return len(res.Sessions[0].Messages), res.Sessions[0]
}

// A one-document recording bigger than a document held whole
// (importer.MaxDocument) is read, every message of it, in the memory its
// messages take: never the document's bytes besides.
func TestBigOneDocumentRecording(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a recording of more than 128 MB")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "session-big.json")
	size1 := writeDocument(t, file, 1)
	n1, _ := readMessages(t, file)
	writeDocument(t, file, 2)
	n2, _ := readMessages(t, file)
	reps := int(importer.MaxDocument/size1) + 2
	size := writeDocument(t, file, reps)
	if size <= importer.MaxDocument {
		t.Fatalf("the recording is %d bytes, not above %d", size, importer.MaxDocument)
	}

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	n, s := readMessages(t, file)
	took := time.Since(start)
	close(stop)
	<-sampled
	runtime.KeepAlive(s)

	if want := n1 + (reps-1)*(n2-n1); n != want {
		t.Errorf("%d messages read of %d copies of the recording, want %d", n, reps, want)
	}
	last := s.Messages[len(s.Messages)-1]
	if !strings.Contains(last.ID, fmt.Sprintf("-%d", reps-1)) {
		t.Errorf("the last message read is %q, not one of the last copy", last.ID)
	}
	grew := peak.Load() - min(base, peak.Load())
	t.Logf("%d MB read in %v: %d messages; peak heap %d MB above the %d MB before",
		size>>20, took.Round(time.Millisecond), n, grew>>20, base>>20)
	// The messages read, and the session made of them, take about three
	// times what their text takes in the file, garbage not yet collected
	// included; holding the document besides would take it twice again.
	if limit := uint64(size) * 4; grew > limit {
		t.Errorf("peak heap %d MB while reading a %d MB recording, want at most %d MB", grew>>20, size>>20, limit>>20)
	}
}
