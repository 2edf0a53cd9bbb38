package gemini

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loomhq/loom/importer"
)

const (
	// maxProblems bounds the problems listed for one file; the rest are
	// counted in one last problem.
	maxProblems = 100
	// maxSkipNames bounds the distinct names unknown records are counted
	// under; past it they count as "unknown:other".
	maxSkipNames = 200
	// maxNameLen bounds a record type as it appears in a skip name.
	maxNameLen = 64
	// forkBudgetBase and forkBudgetPerByte bound how many messages the
	// abandoned branches of one file may hold in all (each repeats the
	// messages it shares with the conversation): a few rewinds of a long
	// session fit, a file made of rewinds cannot multiply its size.
	forkBudgetBase    = 1 << 16
	forkBudgetPerByte = 64
	// maxMarker bounds the .project_root marker read.
	maxMarker = 64 << 10
)

// recording is one file read: its metadata and its conversation, with the
// branches rewinds abandoned.
type recording struct {
	path string
	hdr  header
	// sessionID is the first session id the file gave, kept even if a
	// later $set changes it, so that a growing file keeps its key.
	sessionID string
	chain     chain
	branches  []branch
	// budget is how many more messages branches may hold.
	budget int
	// records counts what was recognised (header, messages, patches).
	records int
	// doc says the lines read are a one-document recording's
	// (document.go): a message is named by its place in the list, the
	// header being line 1.
	doc bool
}

// reader reads one bundle into res.
type reader struct {
	ctx context.Context
	res *importer.Result
	// problems counts the problems of the file being read.
	problems map[string]int
	// segPath is the recording read a segment at a time, seg its
	// segment (segment.go).
	segPath string
	seg     importer.Segment
}

func (r *reader) problem(file string, line int, reason string) {
	if r.problems == nil {
		r.problems = map[string]int{}
	}
	r.problems[file]++
	if r.problems[file] <= maxProblems {
		r.res.Problemf(file, line, reason)
	}
}

// finish reports the problems that were not listed, and orders the
// problems by file and line.
func (r *reader) finish(files []string) {
	order := map[string]int{}
	for i, f := range files {
		if _, ok := order[f]; !ok {
			order[f] = i
		}
		if n := r.problems[f] - maxProblems; n > 0 {
			r.res.Problemf(f, 0, strconv.Itoa(n)+" more problems not listed")
			r.problems[f] = maxProblems
		}
	}
	line := func(p importer.Problem) int {
		if p.Line == 0 {
			return math.MaxInt
		}
		return p.Line
	}
	slices.SortStableFunc(r.res.Problems, func(a, b importer.Problem) int {
		if c := cmp.Compare(order[a.File], order[b.File]); c != 0 {
			return c
		}
		return cmp.Compare(line(a), line(b))
	})
}

func (r *reader) skip(name string) {
	if _, ok := r.res.Skipped[name]; !ok && len(r.res.Skipped) >= maxSkipNames && strings.HasPrefix(name, "unknown:") {
		name = "unknown:other"
	}
	r.res.Skip(name)
}

// skipName shortens a type read from a file for use in a skip name.
func skipName(prefix, t string) string {
	if len(t) > maxNameLen {
		t = t[:maxNameLen]
	}
	return prefix + strings.ToValidUTF8(t, "?")
}

// Read reads one bundle: a recording and the recordings of the sub-agents
// it ran. The project's .project_root marker, which no bundle lists (see
// Bundles), gives the working directory when the recordings name none; it
// is read from the project's directory, beside its chats directory. A
// read cancelled before it is done returns the context's error, never
// part of a recording.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	return (&reader{ctx: ctx, res: &importer.Result{}}).readBundle(b)
}

func (r *reader) readBundle(b importer.Bundle) (*importer.Result, error) {
	ctx := r.ctx
	if len(b.Files) == 0 {
		return nil, errors.New("gemini: empty bundle")
	}
	var mains, subs []string
	for _, f := range b.Files {
		if isSubagentFile(f) {
			subs = append(subs, f)
		} else {
			mains = append(mains, f)
		}
	}
	projectRoot := ""
	if marker := markerFor(b.Files[0]); marker != "" {
		projectRoot = readMarker(marker)
	}
	// parents maps a sub-agents' directory to the session it belongs to.
	parents := map[string]*session{}
	for _, f := range mains {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := r.readFile(f)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue
		}
		s := r.build(rec, projectRoot)
		if s == nil {
			continue
		}
		parents[rec.sessionID] = s
		parents[sanitize(rec.sessionID)] = s
	}
	for i, f := range subs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := r.readFile(f)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			if i == 0 && len(mains) == 0 {
				return nil, err
			}
			r.problem(f, 0, err.Error())
			continue
		}
		if rec == nil {
			continue
		}
		dir := filepath.Base(filepath.Dir(f))
		parent, cwd := parents[dir], projectRoot
		if parent != nil {
			cwd = parent.cwd
		}
		r.buildSubagent(rec, parent, dir, cwd)
	}
	// A cancellation in the middle of a message list or of the branches
	// leaves a recording cut short: it is no result.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.dedupe()
	r.finish(b.Files)
	return r.res, nil
}

// sanitize is a session id made safe for a directory name, letters,
// digits, - and _ kept, the way Gemini CLI names a sub-agents' directory
// after its parent's id; a UUID is unchanged.
func sanitize(id string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			return c
		}
		return '_'
	}, id)
}

// readMarker returns the project root a .project_root marker names, ""
// if it cannot be read.
func readMarker(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMarker))
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	line = strings.TrimSpace(line)
	if !utf8.ValidString(line) {
		return ""
	}
	return line
}

// readFile reads one recording file in either form. It returns nil for a
// file with nothing in it, and an error for one that is not a recording.
//
// A JSONL recording is read a line at a time, a one-document recording
// (.json) a message at a time, each up to importer.MaxFile (one bigger
// than a segment is written as lines and read in segments instead,
// document.go); a .json is
// read again when it was caught while Gemini CLI was writing it (see
// readWhole). A file over the limit is refused before it is read.
func (r *reader) readFile(file string) (*recording, error) {
	if strings.HasSuffix(file, ".json") {
		return r.readWhole(file)
	}
	if file == r.segPath {
		return r.readSegmentFile(file)
	}
	f, fi, err := importer.Open(file, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	defer f.Close()
	rec := newRecording(file, fi)
	if err := r.readLines(rec, f); err != nil {
		return nil, err
	}
	return r.read(rec, fi)
}

// newRecording is the recording of file, to be read, with the fork
// budget its size allows.
func newRecording(file string, fi fs.FileInfo) *recording {
	return &recording{path: file, budget: forkBudgetBase + int(min(fi.Size()/forkBudgetPerByte, 1<<30))}
}

// read is rec once its file is read: nil when the file held nothing, an
// error when it held nothing of a recording.
func (r *reader) read(rec *recording, fi fs.FileInfo) (*recording, error) {
	if rec.records == 0 {
		if fi.Size() == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("gemini: %s: not a Gemini CLI chat recording", rec.path)
	}
	if rec.sessionID == "" {
		rec.sessionID = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(rec.path), ".jsonl"), ".json")
		if !r.res.LostBefore(rec.path, 2) {
			// (A first line that could not be read, which held it, has
			// its line already.)
			r.problem(rec.path, 0, "no session id; the file name stands for it")
		}
	}
	return rec, nil
}

// readLines reads a JSONL recording.
func (r *reader) readLines(rec *recording, f *os.File) error {
	err := importer.Lines(r.ctx, f, func(n int, line []byte) error {
		r.line(rec, n, line)
		return nil
	}, func(n int) {
		r.problem(rec.path, n, "line longer than "+strconv.Itoa(importer.MaxLine)+" bytes")
	})
	if err != nil {
		return fmt.Errorf("gemini: %s: %w", rec.path, err)
	}
	return nil
}

// line reads one line of a JSONL recording, as Gemini CLI replays it.
func (r *reader) line(rec *recording, n int, line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	problem := func(reason string) { r.problem(rec.path, n, reason) }
	if rec.doc {
		problem = func(reason string) {
			r.problem(rec.path, 0, "message "+strconv.Itoa(n-2)+" of the list: "+reason)
		}
	}
	if line[0] != '{' {
		problem("not a JSON object")
		return
	}
	var v record
	if err := json.Unmarshal(line, &v); err != nil {
		problem("malformed record: " + err.Error())
		return
	}
	if !utf8.Valid(line) {
		problem(importer.NotUTF8)
	}
	if v.Document {
		rec.doc = true
	}
	switch {
	case v.RewindTo != nil:
		var id string
		if err := json.Unmarshal(v.RewindTo, &id); err != nil {
			r.problem(rec.path, n, "$rewindTo is not a message id")
			return
		}
		rec.records++
		r.rewind(rec, n, id)
	case v.ID != "" || v.Type != "":
		rec.records++
		m := v.message
		m.line, m.pos = n, "line-"+strconv.Itoa(n)
		if rec.doc {
			m.line, m.pos = 0, "msg-"+strconv.Itoa(n-2)
		}
		m.modelType()
		rec.chain.put(messageKey(&m), &m)
	case v.Set != nil:
		var set setRecord
		if err := json.Unmarshal(v.Set, &set); err != nil {
			r.problem(rec.path, n, "malformed $set: "+err.Error())
			return
		}
		rec.records++
		r.applyHeader(rec, set.header)
		r.putList(rec, set.Messages, n, "line-"+strconv.Itoa(n)+"-")
	case v.SessionID != "" || v.ProjectHash != "":
		rec.records++
		r.applyHeader(rec, v.header)
		r.putList(rec, v.Messages, n, "line-"+strconv.Itoa(n)+"-")
	default:
		r.skip("unknown:record")
	}
}

// messageKey is the id a message is known by in its file: its own, or
// where it was read.
func messageKey(m *message) string {
	if m.ID != "" {
		return m.ID
	}
	return "\x00" + m.pos
}

// applyHeader merges metadata, as Gemini CLI merges a header or a $set.
func (r *reader) applyHeader(rec *recording, h header) {
	if h.SessionID != "" {
		if rec.sessionID == "" {
			rec.sessionID = oneLine(h.SessionID)
		}
		rec.hdr.SessionID = h.SessionID
	}
	if h.ProjectHash != "" {
		rec.hdr.ProjectHash = h.ProjectHash
	}
	if h.LoomHandoff != nil && rec.hdr.LoomHandoff == nil {
		rec.hdr.LoomHandoff = h.LoomHandoff
	}
	if h.StartTime != "" {
		rec.hdr.StartTime = h.StartTime
	}
	if h.LastUpdated != "" {
		rec.hdr.LastUpdated = h.LastUpdated
	}
	if h.Summary != nil {
		rec.hdr.Summary = h.Summary
	}
	if h.Directories != nil {
		rec.hdr.Directories = h.Directories
	}
	if h.ProjectRoot != "" {
		rec.hdr.ProjectRoot = h.ProjectRoot
	}
	if h.Kind != "" {
		rec.hdr.Kind = h.Kind
	}
}

// putList applies a list of messages written whole: the messages of a
// one-document recording or of a header, or a $set snapshot. It stops
// when the context ends, leaving the list cut short: Read then returns
// the context's error.
func (r *reader) putList(rec *recording, raw json.RawMessage, line int, pos string) {
	if importer.IsNull(raw) {
		return
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		r.problem(rec.path, line, "messages is not a list")
		return
	}
	ids := make([]string, 0, len(list))
	msgs := make([]*message, 0, len(list))
	for i, el := range list {
		if i%1024 == 1023 && r.ctx.Err() != nil {
			return
		}
		m := &message{}
		if err := json.Unmarshal(el, m); err != nil {
			r.problem(rec.path, line, "message "+strconv.Itoa(i)+" of the list: "+err.Error())
			continue
		}
		m.line, m.pos = line, pos+strconv.Itoa(i)
		m.modelType()
		ids = append(ids, messageKey(m))
		msgs = append(msgs, m)
	}
	rec.chain.snapshot(ids, msgs)
}

// rewind applies a $rewindTo and keeps what it removed as a branch, as
// long as the file's budget allows.
func (r *reader) rewind(rec *recording, line int, id string) {
	removed, kept := rec.chain.rewind(id, r.res.LostLine(rec.path, line))
	if len(removed) == 0 {
		return
	}
	if kept+len(removed) > rec.budget {
		rec.budget = 0
		r.problem(rec.path, line, "rewind: too many rewound messages in one file; this abandoned branch is not kept")
		return
	}
	rec.budget -= kept + len(removed)
	rec.branches = append(rec.branches, branch{prefix: rec.chain.nodes(), removed: removed})
}

// oneLine replaces control characters, so that an id is one line.
func oneLine(s string) string {
	return strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return '_'
		}
		return c
	}, strings.ToValidUTF8(s, "_"))
}
