package importer_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/sqlite"
)

// spotter is the real Claude Code session with a sub-agent's file
// (agent-a881341.jsonl: a prompt, two replies that each fetch a page,
// a last reply).
const (
	spotterDir   = "claude-code/spotter"
	spotterMain  = "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
	spotterAgent = "agent-a881341.jsonl"
)

// claudeIDs are the fields of a Claude Code line that name a line, a
// reply, a request or a tool call, which each copy of a sub-agent's
// turns makes its own.
var claudeIDs = regexp.MustCompile(`"(uuid|parentUuid|id|tool_use_id|requestId|toolUseID|parentToolUseID|sourceToolAssistantUUID)":"([^"]*)"`)

// claudeAgentFile is the real session with sub-agents, its sub-agent's
// file written to genSize from the real one: its prompt, then its
// replies and their tool results over and over (each copy's ids its
// own, its first line under the copy before's last), then its last
// reply. Bigger than a segment, that file is a bundle of its own.
func claudeAgentFile(t *testing.T, seed, dir string) string {
	t.Helper()
	main := filepath.Join(dir, filepath.Base(seed))
	data := importertest.ReadBytes(t, seed)
	writeSession(t, main, data)
	if err := os.Rename(copyTree(t, trimExt(seed)), trimExt(main)); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(trimExt(main), "subagents", spotterAgent)
	data = importertest.ReadBytes(t, agent)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) < 3 {
		t.Fatalf("%s: %d lines", agent, len(lines))
	}
	f, err := os.Create(agent)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	copyOf := func(l []byte, k int) []byte {
		return claudeIDs.ReplaceAllFunc(l, func(m []byte) []byte {
			sub := claudeIDs.FindSubmatch(m)
			return []byte(`"` + string(sub[1]) + `":"` + string(sub[2]) + "-" + strconv.Itoa(k) + `"`)
		})
	}
	written, _ := w.Write(append(lines[0], '\n'))
	k := 0
	for ; written < genSize; k++ {
		for _, l := range lines[1 : len(lines)-1] {
			n, _ := w.Write(append(copyOf(l, k), '\n'))
			written += n
		}
	}
	if _, err := w.Write(append(copyOf(lines[len(lines)-1], k-1), '\n')); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return main
}

// segmentLog is a format that notes the segments it is asked to read,
// by main file.
type segmentLog struct {
	importer.Format
	segs map[string][]importer.Segment
}

func (l *segmentLog) ReadSegment(ctx context.Context, b importer.Bundle, seg importer.Segment) (*importer.Result, error) {
	if l.segs == nil {
		l.segs = map[string][]importer.Segment{}
	}
	l.segs[b.Name()] = append(l.segs[b.Name()], seg)
	return l.Format.(importer.Segmenter).ReadSegment(ctx, b, seg)
}

func (l *segmentLog) Restart(line []byte) bool { return l.Format.(importer.Segmenter).Restart(line) }

func (l *segmentLog) Turns(name string) func([]byte) bool {
	return l.Format.(importer.TurnScanner).Turns(name)
}

// A Claude Code sub-agent's file bigger than a segment is read a
// segment at a time, as a bundle of its own, and never whole: each
// segment is about a segment's size and ends where a reply follows the
// results of the one before. Followed as it grows, each import reads
// on from where the one before read up to and adds only the messages
// appended since; what is stored is what a reading of the file whole
// with its session stores, the session's task call linked to the
// sub-agent's session and its description the sub-agent's title.
func TestBigSubagentFile(t *testing.T) {
	seed := filepath.Join(agentSessions, spotterDir, spotterMain)
	if _, err := os.Stat(seed); err != nil {
		t.Skip("no real session files here")
	}
	// The parent's messages, where its task call waits for the
	// sub-agent's session, are read a page at a time: here one.
	importer.SetLinkPage(t, 1)
	path := claudeAgentFile(t, seed, t.TempDir())
	agent := filepath.Join(trimExt(path), "subagents", spotterAgent)
	data := readSession(t, agent)
	cuts := []int{}
	for _, part := range []int{len(data) / 3, 2 * len(data) / 3, len(data)} {
		cut := part
		if i := bytes.IndexByte(data[part-1:], '\n'); i >= 0 {
			cut = part + i
		}
		cuts = append(cuts, cut)
	}
	// The sub-agent's file as it had written a third of it, then two
	// thirds, then all of it; read is called after each import.
	follow := func(f importer.Format, read func(i int)) (map[string]string, []*importer.ToolReport) {
		st := importertest.Store(t)
		var reps []*importer.ToolReport
		for i, cut := range cuts {
			writeSession(t, agent, data[:cut])
			reps = append(reps, importertest.Import(t, st, f, path))
			read(i)
		}
		return imported(t, st, claudecode.Tool), reps
	}
	want, wholeReps := follow(claudecode.New(), func(int) {})
	key := claudecode.Tool + ":" + strings.TrimSuffix(spotterMain, ".jsonl") + "/agent-a881341"
	if !strings.Contains(want[key], `"Title":"Research Claude hook output"`) {
		t.Fatalf("the whole reading's sub-agent session: %.300s", want[key])
	}

	const seg = 64 << 10
	withSegments(t, seg)
	log := &segmentLog{Format: claudecode.New()}
	var imports [][]importer.Segment
	got, reps := follow(log, func(i int) {
		segs := log.segs[agent]
		done := 0
		for _, im := range imports {
			done += len(im)
		}
		imports = append(imports, segs[done:])
	})
	sameImport(t, got, want)
	parent := claudecode.Tool + ":" + strings.TrimSuffix(spotterMain, ".jsonl")
	if !strings.Contains(got[parent], `"session_id":"`+key+`"`) {
		t.Errorf("the session's task call does not name the sub-agent's session %s", key)
	}
	for i := range reps {
		if reps[i].SessionsNew != wholeReps[i].SessionsNew || reps[i].MessagesAdded != wholeReps[i].MessagesAdded {
			t.Errorf("import %d: %d sessions new, %d messages added; read whole with its session: %d, %d",
				i+1, reps[i].SessionsNew, reps[i].MessagesAdded, wholeReps[i].SessionsNew, wholeReps[i].MessagesAdded)
		}
		if i > 0 && (reps[i].SessionsNew != 0 || reps[i].MessagesAdded == 0) {
			t.Errorf("import %d of the grown file: %d sessions new, %d messages added", i+1, reps[i].SessionsNew, reps[i].MessagesAdded)
		}
	}
	// The first import reads from the file's start, each later one from
	// the turn the one before ended in (a reply or two before), each to
	// the file's end, in segments of about a segment's size: a segment
	// ends at the first turn that starts after a segment's size, and the
	// first reply a look for one meets does not count.
	for i, segs := range imports {
		if len(segs) < 2 {
			t.Fatalf("import %d read the sub-agent's file in %d segments: %v", i+1, len(segs), segs)
		}
		from := segs[0].From
		if i == 0 && from != 0 {
			t.Errorf("the first import read the sub-agent's file from %d", from)
		}
		if prev := int64(cuts[max(i-1, 0)]); i > 0 && (from > prev || from < prev-4*seg) {
			t.Errorf("import %d read the sub-agent's file from %d, where the import before read it up to %d", i+1, from, prev)
		}
		if to := segs[len(segs)-1].To; to != int64(cuts[i]) {
			t.Errorf("import %d read the sub-agent's file up to %d of %d", i+1, to, cuts[i])
		}
		for _, s := range segs {
			if s.To-s.From > 4*seg {
				t.Errorf("import %d read [%d, %d) of the sub-agent's file at once: %d bytes", i+1, s.From, s.To, s.To-s.From)
			}
		}
	}
	if n := len(log.segs[path]); n == 0 {
		t.Errorf("the session file, bigger than a segment too, was not read in segments")
	}

	// A sub-agent's file read with its session while it was small goes
	// its own way once it is bigger than a segment, and a reimport of
	// the kept originals, the files gone, makes it all again.
	t.Run("grows past a segment", func(t *testing.T) {
		st := importertest.Store(t)
		small := bytes.IndexByte(data[seg/2:], '\n') + seg/2 + 1
		for _, cut := range []int{small, len(data)} {
			writeSession(t, agent, data[:cut])
			importertest.Import(t, st, claudecode.New(), path)
		}
		sameImport(t, imported(t, st, claudecode.Tool), want)
		importertest.NothingNew(t, st, claudecode.New(), path)
		if err := os.RemoveAll(filepath.Dir(path)); err != nil {
			t.Fatal(err)
		}
		if tr := reimport(t, st, claudecode.New()); tr.SessionsRepaired != 0 || tr.MessagesAdded != 0 {
			t.Errorf("reimport: %d sessions made again, %d messages added", tr.SessionsRepaired, tr.MessagesAdded)
		}
		sameImport(t, imported(t, st, claudecode.Tool), want)
	})
}

// geminiAgentFile is the Gemini CLI fixture of a session with its
// sub-agents' recordings, one of those written to genSize from the
// fixture's: its header, prompt and first $set, then its reply (a tool
// call with its result) and $set over and over, each copy's ids its
// own; the chats directory returned. Bigger than a segment, that
// recording is a bundle of its own.
func geminiAgentFile(t *testing.T, seed, dir string) string {
	t.Helper()
	importertest.MkdirAll(t, dir)
	data := importertest.ReadBytes(t, seed)
	writeSession(t, filepath.Join(dir, filepath.Base(seed)), data)
	subs := filepath.Join(filepath.Dir(seed), geminiAgentDir)
	if err := os.Rename(copyTree(t, subs), filepath.Join(dir, geminiAgentDir)); err != nil {
		t.Fatal(err)
	}
	repeatTurns(t, filepath.Join(subs, geminiAgent), filepath.Join(dir, geminiAgentDir, geminiAgent), 3, nil)
	return dir
}

// The Gemini CLI fixture with sub-agents: its session and the recording
// geminiAgentFile makes big.
const (
	geminiAgentsDir  = "gemini/testdata/agents/chats"
	geminiAgentsMain = "session-2026-05-12T10-15-7c1e9f20.jsonl"
	geminiAgentDir   = "7c1e9f20-4b2a-4d8e-9a61-3f0c2b7d5e14"
	geminiAgent      = "a3f1c2d4-6b8e-4f0a-9c2d-1e5f7a9b3c60.jsonl"
)

// A Gemini CLI sub-agent's recording bigger than a segment is read a
// segment at a time, as a bundle of its own: imported, followed as it
// grows (each import adding only what was appended) and reimported
// from its kept originals, it makes what a reading of it whole with its
// session makes.
func TestBigGeminiSubagentRecording(t *testing.T) {
	seed := filepath.Join(geminiAgentsDir, geminiAgentsMain)
	chats := geminiAgentFile(t, seed, filepath.Join(t.TempDir(), "chats"))
	agent := filepath.Join(chats, geminiAgentDir, geminiAgent)
	data := readSession(t, agent)
	var cuts []int
	for _, part := range []int{len(data) / 3, 2 * len(data) / 3, len(data)} {
		cut := part
		if i := bytes.IndexByte(data[part-1:], '\n'); i >= 0 {
			cut = part + i
		}
		cuts = append(cuts, cut)
	}
	follow := func(f importer.Format, read func()) (map[string]string, []*importer.ToolReport, *sqlite.Store) {
		st := importertest.Store(t)
		var reps []*importer.ToolReport
		for _, cut := range cuts {
			writeSession(t, agent, data[:cut])
			reps = append(reps, importertest.Import(t, st, f, chats))
			read()
		}
		return imported(t, st, gemini.Tool), reps, st
	}
	want, wholeReps, _ := follow(gemini.Format{}, func() {})
	key := gemini.Tool + ":" + geminiAgentDir + "/" + strings.TrimSuffix(geminiAgent, ".jsonl")
	if _, ok := want[key]; !ok || len(want) < 4 {
		t.Fatalf("the whole reading: %d sessions, none %s", len(want), key)
	}

	const seg = 64 << 10
	withSegments(t, seg)
	log := &segmentLog{Format: gemini.Format{}}
	var firsts []importer.Segment // each import's first segment
	read := 0
	got, reps, st := follow(log, func() {
		firsts = append(firsts, log.segs[agent][read])
		read = len(log.segs[agent])
	})
	sameImport(t, got, want)
	for i := range reps {
		if reps[i].SessionsNew != wholeReps[i].SessionsNew || reps[i].MessagesAdded != wholeReps[i].MessagesAdded {
			t.Errorf("import %d: %d sessions new, %d messages added; read whole with its session: %d, %d",
				i+1, reps[i].SessionsNew, reps[i].MessagesAdded, wholeReps[i].SessionsNew, wholeReps[i].MessagesAdded)
		}
	}
	segs := log.segs[agent]
	if len(segs) < len(data)/seg/2 {
		t.Fatalf("the recording of %d bytes was read in %d segments", len(data), len(segs))
	}
	for _, s := range segs {
		if s.To-s.From > 2*seg {
			t.Errorf("[%d, %d) of the recording read at once: %d bytes", s.From, s.To, s.To-s.From)
		}
	}
	// Each follow reads on from the reply before where the import
	// before read up to.
	for i, s := range firsts[1:] {
		if prev := int64(cuts[i]); s.From > prev || s.From < prev-seg {
			t.Errorf("import %d read the recording from %d, where the one before read it up to %d", i+2, s.From, prev)
		}
	}
	importertest.NothingNew(t, st, gemini.Format{}, chats)
	if err := os.RemoveAll(chats); err != nil {
		t.Fatal(err)
	}
	reimport(t, st, gemini.Format{})
	sameImport(t, imported(t, st, gemini.Tool), want)
}
