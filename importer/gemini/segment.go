package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/loomhq/loom/importer"
)

var _ importer.Segmenter = Format{}

// SegmentsOf reports whether a recording file is read in segments as it
// is when it is big: a JSONL one; a one-document recording (.json) is a
// single JSON value, read a message at a time (whole.go), or when big
// written as lines first (document.go).
func (Format) SegmentsOf(name string) bool { return strings.HasSuffix(name, ".jsonl") }

// ReadSegment reads a bundle with its JSONL recording cut to seg
// (importer.Segmenter): a big recording, a segment at a time. The
// recording's first line, its header (session id, project, directories,
// start time), is read with every segment that does not hold it; the
// sub-agents' recordings are read whole.
func (Format) ReadSegment(ctx context.Context, b importer.Bundle, seg importer.Segment) (*importer.Result, error) {
	r := &reader{ctx: ctx, res: &importer.Result{}, segPath: b.Name(), seg: seg}
	return r.readBundle(b)
}

// Restart reports whether line is a prompt: a turn starts there, and
// Gemini CLI writes each of a turn's messages again (as a reply grows,
// as its tools return) only within that turn, so a segment read from a
// prompt on makes the messages a reading of the whole file makes of
// what follows.
func (Format) Restart(line []byte) bool {
	if !bytes.Contains(line, []byte(`"user"`)) {
		return false
	}
	var l struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	return json.Unmarshal(line, &l) == nil && l.Type == "user" && l.ID != ""
}

var _ importer.TurnScanner = Format{}

// Turns tells the turns of a sub-agent's recording
// (importer.TurnScanner), which holds its task as its one prompt and
// then the model's replies, each with its tool calls and their results,
// written again as they grow: a reply starts a turn where its id first
// appears after another reply's, whose calls Gemini CLI ran before it
// asked for this one. The first reply a scan meets is never taken,
// since the lines before it are unknown. A session's recording's turns
// are its prompts (Restart).
func (Format) Turns(name string) func(line []byte) bool {
	if !isSubagentFile(name) {
		return nil
	}
	var reply string
	replied := false
	return func(line []byte) bool {
		if !bytes.Contains(line, []byte(`"gemini"`)) && !bytes.Contains(line, []byte(`"user"`)) {
			return false
		}
		var l struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &l) != nil || l.ID == "" {
			return false
		}
		switch l.Type {
		case "user":
			return true
		case "gemini":
			starts := replied && l.ID != reply
			reply, replied = l.ID, true
			return starts
		}
		return false
	}
}

// readSegmentFile reads the segment r.seg of a JSONL recording, after
// its header line when the segment does not start the file.
func (r *reader) readSegmentFile(file string) (*recording, error) {
	f, fi, err := importer.Open(file, 0)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	defer f.Close()
	rec := newRecording(file, fi)
	head, err := importer.FirstLine(r.ctx, f, r.seg.From)
	if err != nil {
		return nil, fmt.Errorf("gemini: %s: %w", file, err)
	}
	if len(head) > 0 && !bytes.HasPrefix(head, []byte(`{"$`)) {
		var v record
		err := json.Unmarshal(head, &v)
		rec.doc = err == nil && v.Document
		if err == nil && v.ID == "" && v.Type == "" && (v.SessionID != "" || v.ProjectHash != "") {
			// Only its metadata: its messages, if any, are those of
			// the segment that starts the file.
			rec.records++
			r.applyHeader(rec, v.header)
		}
	}
	err = importer.LinesFrom(r.ctx, io.NewSectionReader(f, r.seg.From, r.seg.To-r.seg.From), r.seg.Line, func(n int, line []byte) error {
		r.line(rec, n, line)
		return nil
	}, func(n int) {
		r.problem(rec.path, n, "line longer than "+strconv.Itoa(importer.MaxLine)+" bytes")
	})
	if err != nil {
		return nil, fmt.Errorf("gemini: %s: %w", rec.path, err)
	}
	return r.read(rec, fi)
}
