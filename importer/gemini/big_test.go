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

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// realRecording is a real Gemini CLI recording (JSONL form); its header
// and messages give the shape of the big one-document recording below.
var realRecording = filepath.Join("..", "..", "testdata", "agent-sessions", "gemini", "vibecodingtracker-gemini.jsonl")

// writeDocument writes the real recording's messages, repeated reps
// times with ids of their own, as the one-document recording Gemini CLI
// writes (indented by two spaces), to file. It returns the file's size.
func writeDocument(t *testing.T, file string, reps int) int64 {
	t.Helper()
	raw := importertest.ReadBytes(t, realRecording)
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
// (importer.MaxDocument) is imported, every message of it, a segment at
// a time: the memory it takes is bounded by a segment's, not by the
// recording's size.
func TestBigOneDocumentRecording(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a recording of more than 128 MB")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "session-big.json")
	size1 := writeDocument(t, file, 1)
	n1, s1 := readMessages(t, file)
	writeDocument(t, file, 2)
	n2, _ := readMessages(t, file)
	reps := int(importer.MaxDocument/size1) + 2
	size := writeDocument(t, file, reps)
	if size <= importer.MaxDocument {
		t.Fatalf("the recording is %d bytes, not above %d", size, importer.MaxDocument)
	}
	st := importertest.Store(t)

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
	rep := importertest.Import(t, st, Format{}, file)
	took := time.Since(start)
	close(stop)
	<-sampled

	if rep.FilesFailed != 0 {
		t.Fatalf("import failed: %v", rep.Problems)
	}
	want := n1 + (reps-1)*(n2-n1)
	if s := storedSession(t, st, s1.SourceID); s.MessageCount != want || rep.MessagesAdded != want {
		t.Errorf("%d messages stored (%d added) of %d copies of the recording, want %d", s.MessageCount, rep.MessagesAdded, reps, want)
	}
	grew := peak.Load() - min(base, peak.Load())
	t.Logf("%d MB imported in %v: %d messages; peak heap %d MB above the %d MB before",
		size>>20, took.Round(time.Millisecond), want, grew>>20, base>>20)
	// A segment's messages and what is built of them take a few times
	// the segment's bytes; holding the recording's messages would take
	// some three times the file's size.
	if limit := uint64(12 * importer.SegmentSize()); grew > limit {
		t.Errorf("peak heap %d MB while importing a %d MB recording, want at most %d MB (12 segments' size)", grew>>20, size>>20, limit>>20)
	}
}

// A one-document recording bigger than a segment, written as lines and
// imported a segment at a time, is stored as a reading of it whole makes
// its session: the same messages, in the same order, with the same
// parts, times and usage.
func TestOneDocumentInSegments(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a recording of two segments and more")
	}
	// In its project's chats directory, whose marker names the root
	// the recording does not.
	project := filepath.Join(t.TempDir(), "tmp", "p")
	importertest.MkdirAll(t, filepath.Join(project, "chats"))
	importertest.WriteFile(t, filepath.Join(project, markerName), []byte("/home/dev/p\n"), 0o644)
	file := filepath.Join(project, "chats", "session-big.json")
	size1 := writeDocument(t, file, 1)
	if size := writeDocument(t, file, int(2*importer.SegmentSize()/size1)+2); size <= 2*importer.SegmentSize() {
		t.Fatalf("the recording is %d bytes, not above two segments", size)
	}
	_, whole := readMessages(t, file)
	st := importertest.Store(t)
	if rep := importertest.Import(t, st, Format{}, file); rep.FilesFailed != 0 || len(rep.Problems) != 0 {
		t.Fatalf("import: %d failed: %v", rep.FilesFailed, rep.Problems)
	}
	s := storedSession(t, st, whole.SourceID)
	stored, err := st.Messages(context.Background(), s.ID, loom.MessageQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(whole.Messages) {
		t.Fatalf("%d messages stored, a whole reading makes %d", len(stored), len(whole.Messages))
	}
	if s.Project.Root != "/home/dev/p" || whole.Cwd != "/home/dev/p" {
		t.Errorf("stored in project %q, a whole reading makes %q", s.Project.Root, whole.Cwd)
	}
	for i, m := range stored {
		w := whole.Messages[i]
		got, _ := json.Marshal(m.Parts)
		want, _ := json.Marshal(w.Parts)
		if m.Role != w.Role || !bytes.Equal(got, want) || m.Model != w.Model || m.Usage != w.Usage || !m.CreatedAt.Equal(w.CreatedAt) {
			t.Fatalf("message %d stored as %s %s %s, a whole reading makes %s %s %s", i+1, m.Role, m.Model, got, w.Role, w.Model, want)
		}
	}
}

// A one-document recording bigger than a segment found cut short (as
// Gemini CLI leaves it while it writes it) is one problem naming the
// file, and is not recorded as read: the next import reads it again.
func TestBigOneDocumentCutShort(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a recording of more than a segment")
	}
	file := filepath.Join(t.TempDir(), "session-big.json")
	size1 := writeDocument(t, file, 1)
	size := writeDocument(t, file, int(importer.SegmentSize()/size1)+2)
	if err := os.Truncate(file, size-size1/2); err != nil {
		t.Fatal(err)
	}
	st := importertest.Store(t)
	rep := importertest.Import(t, st, Format{}, file)
	if rep.FilesFailed != 1 || rep.MessagesAdded != 0 || len(rep.Problems) != 1 {
		t.Fatalf("%d failed, %d messages added, problems %v; want the file failed, nothing added", rep.FilesFailed, rep.MessagesAdded, rep.Problems)
	}
	t.Logf("%s", rep.Problems[0])
	if p := rep.Problems[0].String(); !strings.Contains(p, "its JSON ends early") || strings.Count(p, file) != 1 {
		t.Errorf("problem %q, want one naming the file once and saying its JSON ends early", p)
	}
	writeDocument(t, file, 2)
	if rep := importertest.Import(t, st, Format{}, file); rep.FilesFailed != 0 || rep.SessionsNew != 1 {
		t.Errorf("the recording written whole again: %d failed, %d new sessions", rep.FilesFailed, rep.SessionsNew)
	}
}
