package importer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/sqlite"
)

// toy is a minimal session format for the importer's own tests: one
// session per *.toy file, one JSON message a line. A line with "result"
// completes the tool call of the message it names; a line with "more"
// adds a text part to the message it names (a reply written over
// several lines).
type toy struct{ reads atomic.Int64 } // read on several workers at once

type toyLine struct {
	ID     string `json:"id"`
	Role   string `json:"role"`
	Text   string `json:"text"`
	Call   string `json:"call"`
	Result string `json:"result"`
	More   string `json:"more"`
	Of     string `json:"of"`
	Title  string `json:"title"`
}

func (*toy) Tool() string                               { return "toy" }
func (*toy) Provider() string                           { return "" }
func (*toy) Roots(func(string) string, string) []string { return nil }

func (*toy) Bundles(_ context.Context, root string) ([]importer.Bundle, error) {
	files, err := filepath.Glob(filepath.Join(root, "*.toy"))
	var out []importer.Bundle
	for _, f := range files {
		out = append(out, importer.Bundle{Files: []string{f}})
	}
	return out, err
}

func (f *toy) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	f.reads.Add(1)
	file, err := os.Open(b.Name())
	if err != nil {
		return nil, err
	}
	defer file.Close()
	res := &importer.Result{}
	s := &importer.Session{SourceID: strings.TrimSuffix(filepath.Base(b.Name()), ".toy"), Path: b.Name(), Cwd: "/nowhere/toyproject"}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	byID := map[string]*loom.Message{}
	err = importer.Lines(ctx, file, func(n int, line []byte) error {
		var l toyLine
		if err := json.Unmarshal(line, &l); err != nil {
			res.Problemf(b.Name(), n, "not JSON")
			return nil
		}
		switch {
		case l.Title != "":
			s.Title = l.Title
		case l.Result != "":
			m := byID[l.Of]
			if m == nil {
				res.Skip("orphan-result")
				return nil
			}
			for i := range m.Parts {
				if m.Parts[i].Type == loom.PartTool {
					m.Parts[i].Status, m.Parts[i].Output = loom.ToolCompleted, json.RawMessage(fmt.Sprintf("%q", l.Result))
				}
			}
		case l.More != "":
			if m := byID[l.Of]; m != nil {
				m.Parts = append(m.Parts, loom.Part{ID: fmt.Sprintf("%s/%d", m.ID, len(m.Parts)), Type: loom.PartText, Text: l.More})
				m.Usage.OutputTokens += 100 // the reply's final usage comes with its last line
			}
		default:
			m := &loom.Message{ID: l.ID, Role: l.Role, CreatedAt: at.Add(time.Duration(n) * time.Second)}
			m.Parts = []loom.Part{{ID: l.ID + "/0", Type: loom.PartText, Text: l.Text}}
			if l.Call != "" {
				m.Parts = append(m.Parts, loom.Part{ID: l.ID + "/1", Type: loom.PartTool, CallID: l.Call, Name: "bash", Input: json.RawMessage(`{}`), Status: loom.ToolRunning})
			}
			m.Usage = loom.Usage{InputTokens: 10, OutputTokens: 5}
			byID[l.ID] = m
			s.Messages = append(s.Messages, m)
		}
		return nil
	}, func(n int) { res.Problemf(b.Name(), n, "line too long") })
	if len(s.Messages) > 0 {
		res.Sessions = append(res.Sessions, s)
	}
	return res, err
}

type fixture struct {
	t   *testing.T
	dir string
	st  *sqlite.Store
	f   *toy
	now time.Time
}

func newFixture(t *testing.T) *fixture {
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fixture{t: t, dir: dir, st: st, f: &toy{}, now: time.Now().Add(time.Hour)}
}

func (fx *fixture) write(name string, lines ...string) {
	fx.t.Helper()
	p := filepath.Join(fx.dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		fx.t.Fatal(err)
	}
	// A new modification time each write, as a tool's writes have.
	fx.now = fx.now.Add(time.Minute)
	os.Chtimes(p, fx.now, fx.now)
}

func (fx *fixture) run(dry bool) *importer.ToolReport {
	fx.t.Helper()
	im := &importer.Importer{Store: fx.st, UserID: "alice", DryRun: dry, Now: func() time.Time { return fx.now.Add(time.Hour) },
		Price: func(string, string, loom.Usage) (float64, bool) { return 0.25, true }}
	rep, err := im.Run(context.Background(), []importer.Target{{Format: fx.f, Roots: []string{fx.dir}, Explicit: true}})
	if err != nil {
		fx.t.Fatal(err)
	}
	return rep.Tools[0]
}

func (fx *fixture) session(key string) (*loom.Session, []*loom.Message) {
	fx.t.Helper()
	ss, err := fx.st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Key: key})
	if err != nil || len(ss) != 1 {
		fx.t.Fatalf("sessions with key %s: %d (%v)", key, len(ss), err)
	}
	msgs, err := fx.st.Messages(context.Background(), ss[0].ID, loom.MessageQuery{})
	if err != nil {
		fx.t.Fatal(err)
	}
	return ss[0], msgs
}

func TestImportIsIncrementalAndIdempotent(t *testing.T) {
	fx := newFixture(t)
	lines := []string{
		`{"title":"Toy work"}`,
		`{"id":"u1","role":"user","text":"list the files"}`,
		`{"id":"a1","role":"assistant","text":"running ls","call":"c1"}`,
	}
	fx.write("s1.toy", lines...)
	fx.write("empty.toy")
	tr := fx.run(false)
	if tr.FilesRead != 2 || tr.SessionsNew != 1 || tr.MessagesAdded != 2 {
		t.Fatalf("first import: %+v", tr)
	}
	s, msgs := fx.session("toy:s1")
	if s.Title != "Toy work" || s.Surface != "toy" || s.Source == nil || s.Source.Tool != "toy" || s.MessageCount != 2 ||
		s.Project.Name != "toyproject" || s.Usage.CostUSD != 0.5 || s.Usage.APICalls != 2-1 {
		t.Fatalf("imported session = %+v", s)
	}
	// The call has no result in the file yet: stored as an error (never
	// running, see docs/import.md), completed in place when its result arrives.
	if msgs[0].ID != "u1" || msgs[1].Parts[1].Status != loom.ToolError || msgs[1].Parts[1].Error != importer.NoResult {
		t.Fatalf("imported messages = %+v", msgs)
	}

	// Again, unchanged: nothing is read, nothing is written.
	tr = fx.run(false)
	if tr.FilesRead != 0 || tr.FilesUnchanged != 2 || fx.f.reads.Load() != 2 {
		t.Fatalf("unchanged re-run: %+v (reads %d)", tr, fx.f.reads.Load())
	}

	// The file grows: the tool result arrives, the reply gets another
	// line, and a new turn starts. Exactly those are added.
	lines = append(lines,
		`{"result":"a.go b.go","of":"a1"}`,
		`{"more":"two files","of":"a1"}`,
		`{"id":"u2","role":"user","text":"thanks"}`)
	fx.write("s1.toy", lines...)
	tr = fx.run(false)
	if tr.SessionsGrown != 1 || tr.MessagesAdded != 1 || tr.ToolsUpdated != 1 || tr.SessionsNew != 0 {
		t.Fatalf("grown re-run: %+v", tr)
	}
	_, msgs = fx.session("toy:s1")
	if len(msgs) != 3 || msgs[1].Parts[1].Status != loom.ToolCompleted || len(msgs[1].Parts) != 3 || msgs[1].Parts[2].Text != "two files" {
		t.Fatalf("after growing: %d messages, reply %+v", len(msgs), msgs[1].Parts)
	}
	hits, _ := fx.st.Search(context.Background(), loom.SearchQuery{Text: "two files", UserID: "alice", Exact: true})
	if len(hits) != 1 {
		t.Fatalf("late part searchable: %d hits", len(hits))
	}

	// Touched but not changed: read again, nothing added.
	fx.write("s1.toy", lines...)
	if tr = fx.run(false); tr.FilesRead != 1 || tr.SessionsUnchanged != 1 || tr.MessagesAdded != 0 {
		t.Fatalf("touched re-run: %+v", tr)
	}

	// Rewritten in place after a rewind: the new continuation goes to a
	// fork, the stored session keeps what it had.
	fx.write("s1.toy", append(lines[:3:3], `{"id":"u3","role":"user","text":"a different question"}`)...)
	tr = fx.run(false)
	if tr.SessionsNew != 1 || tr.MessagesAdded != 3 {
		t.Fatalf("rewound re-run: %+v", tr)
	}
	main, msgs := fx.session("toy:s1")
	fork, fmsgs := fx.session("toy:s1@u3")
	if len(msgs) != 3 || fork.Kind != loom.KindFork || fork.ParentID != main.ID || fork.ForkTurn != 1 || len(fmsgs) != 3 || fmsgs[2].Text() != "a different question" {
		t.Fatalf("fork %+v with %d messages; main has %d", fork, len(fmsgs), len(msgs))
	}

	// Truncated: nothing is lost, nothing added.
	fx.write("s1.toy", lines[:2]...)
	if tr = fx.run(false); tr.MessagesAdded != 0 || tr.SessionsNew != 0 {
		t.Fatalf("truncated re-run: %+v", tr)
	}
	if _, msgs = fx.session("toy:s1"); len(msgs) != 3 {
		t.Fatalf("after truncation the copy has %d messages", len(msgs))
	}
	// Deleted: the copy stays.
	os.Remove(filepath.Join(fx.dir, "s1.toy"))
	fx.run(false)
	fx.session("toy:s1")
}

// A file written a moment ago (a Stop hook right after a reply, a copy
// from a backup) is imported whole, its last reply included; when the
// file grows, the reply is completed in place and a run after that adds
// nothing. The grown session is as recent as its newest message.
func TestImportTakesTheReplyBeingWritten(t *testing.T) {
	fx := newFixture(t)
	lines := []string{`{"id":"u1","role":"user","text":"hello"}`, `{"id":"a1","role":"assistant","text":"thinking","call":"c1"}`}
	fx.write("s.toy", lines...)
	// The clock reads the file's own time: it was written just now.
	im := &importer.Importer{Store: fx.st, UserID: "alice", Now: func() time.Time { return fx.now }}
	target := []importer.Target{{Format: fx.f, Roots: []string{fx.dir}}}
	rep, err := im.Run(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if tr := rep.Tools[0]; tr.MessagesAdded != 2 || tr.SessionsNew != 1 {
		t.Fatalf("import of a file written just now: %+v", tr)
	}
	s, msgs := fx.session("toy:s")
	if len(msgs) != 2 || msgs[1].Text() != "thinking" {
		t.Fatalf("the last reply is held back: %d messages", len(msgs))
	}
	if want := time.Date(2025, 1, 1, 0, 0, 2, 0, time.UTC); !s.UpdatedAt.Equal(want) {
		t.Errorf("updated_at %s, want the last message's %s", s.UpdatedAt, want)
	}
	// The tool goes on writing the same reply, then a new turn.
	lines = append(lines, `{"more":"done thinking","of":"a1"}`, `{"result":"ok","of":"a1"}`, `{"id":"u2","role":"user","text":"next"}`)
	fx.write("s.toy", lines...)
	rep, err = im.Run(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if tr := rep.Tools[0]; tr.MessagesAdded != 1 || tr.SessionsGrown != 1 || tr.ToolsUpdated != 1 {
		t.Fatalf("grown import: %+v", tr)
	}
	s, msgs = fx.session("toy:s")
	if len(msgs) != 3 || len(msgs[1].Parts) != 3 || msgs[1].Parts[1].Status != loom.ToolCompleted || msgs[1].Parts[2].Text != "done thinking" {
		t.Fatalf("the reply is not completed in place: %+v", msgs[1].Parts)
	}
	if msgs[1].Usage.OutputTokens != 105 || s.Usage.OutputTokens != 5+105+5 {
		t.Errorf("the completed reply's usage is %+v (session %+v), want its final 105 output tokens", msgs[1].Usage, s.Usage)
	}
	if want := time.Date(2025, 1, 1, 0, 0, 5, 0, time.UTC); !s.UpdatedAt.Equal(want) {
		t.Errorf("grown session's updated_at %s, want its newest message's %s, not the import's", s.UpdatedAt, want)
	}
	os.Chtimes(filepath.Join(fx.dir, "s.toy"), fx.now.Add(time.Second), fx.now.Add(time.Second))
	rep, err = im.Run(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if tr := rep.Tools[0]; tr.MessagesAdded != 0 || tr.SessionsGrown != 0 || tr.SessionsUnchanged != 1 {
		t.Fatalf("a run after that: %+v", tr)
	}
}

// Imported sessions' ids carry their source's start, so that twenty
// sessions imported at once do not share an id prefix.
func TestImportedIDsCarrySourceTimes(t *testing.T) {
	fx := newFixture(t)
	fx.write("a.toy", `{"id":"u1","role":"user","text":"one"}`)
	fx.write("b.toy", `{"id":"u1","role":"user","text":"two"}`, `{"id":"u2","role":"user","text":"more"}`)
	fx.run(false)
	a, _ := fx.session("toy:a")
	b, _ := fx.session("toy:b")
	if a.ID[:8] != "01941f29" {
		// 2025-01-01T00:00:01Z is 0x01941f297fe8 ms.
		t.Errorf("id %s does not carry the first message's time 2025-01-01", a.ID)
	}
	if a.ID == b.ID || loom.ValidID(a.ID) != nil {
		t.Errorf("ids %s and %s", a.ID, b.ID)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	fx := newFixture(t)
	fx.write("s.toy", `{"id":"u1","role":"user","text":"hello"}`, `not json`)
	tr := fx.run(true)
	if tr.SessionsNew != 1 || tr.MessagesAdded != 1 || tr.ProblemCount != 1 || tr.Problems[0].Line != 2 {
		t.Fatalf("dry run: %+v", tr)
	}
	if ss, _ := fx.st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice"}); len(ss) != 0 {
		t.Fatalf("dry run wrote %d sessions", len(ss))
	}
	if recs, _ := fx.st.ImportedFiles(context.Background(), "alice", ""); len(recs) != 0 {
		t.Fatalf("dry run recorded %d files", len(recs))
	}
	if tr := fx.run(false); tr.SessionsNew != 1 {
		t.Fatalf("import after dry run: %+v", tr)
	}
}

// A file recorded with a bundle that no longer lists it (deleted, or a
// marker file an older reader bundled) does not make the bundle read
// again on every run.
func TestStaleRecordDoesNotRereadTheBundle(t *testing.T) {
	fx := newFixture(t)
	fx.write("s.toy", `{"id":"u1","role":"user","text":"hello"}`)
	fx.run(false)
	main := filepath.Join(fx.dir, "s.toy")
	if err := fx.st.RecordImportedFiles(context.Background(), []loom.ImportedFile{{UserID: "alice", Path: filepath.Join(fx.dir, ".project_root"), Tool: "toy", Bundle: main, Size: 3, ModTime: fx.now}}); err != nil {
		t.Fatal(err)
	}
	if tr := fx.run(false); tr.FilesRead != 0 || tr.FilesUnchanged != 1 {
		t.Fatalf("run after a stale record: %+v", tr)
	}
}
