package pi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/loomhq/loom/importer"
)

var _ importer.Segmenter = Format{}

// ReadSegment reads a segment of a session file (importer.Segmenter):
// a big file, a segment at a time. The file's header line, which names
// the session and its directory, is read with every segment that does
// not hold it; an entry whose parent an earlier segment holds starts
// the part of the tree the segment reads.
func (Format) ReadSegment(ctx context.Context, b importer.Bundle, seg importer.Segment) (*importer.Result, error) {
	path := b.Name()
	if path == "" {
		return nil, errEmpty
	}
	f, _, err := importer.Open(path, 0)
	if err != nil {
		return nil, fmt.Errorf("pi: %w", err)
	}
	defer f.Close()
	rd := newReader(path)
	head, err := importer.FirstLine(ctx, f, seg.From)
	if err != nil {
		return nil, fmt.Errorf("pi: %s: %w", path, err)
	}
	rd.segment = seg.From > 0
	var e entry
	if len(head) > 0 && json.Unmarshal(head, &e) == nil && e.Type == "session" {
		rd.header = &e
	}
	return rd.read(ctx, io.NewSectionReader(f, seg.From, seg.To-seg.From), seg.Line)
}

// Restart reports whether line is a user's prompt, which starts a turn:
// a segment read from it on makes the messages a reading of the whole
// file makes of what follows, as long as pi goes on from the entry
// before it (a move back up the tree, /tree, to an entry of an earlier
// segment is not seen as one).
func (Format) Restart(line []byte) bool {
	if !bytes.Contains(line, []byte(`"user"`)) {
		return false
	}
	var e struct {
		Type    string `json:"type"`
		Message *struct {
			Role string `json:"role"`
		} `json:"message"`
	}
	return json.Unmarshal(line, &e) == nil && e.Type == "message" && e.Message != nil && e.Message.Role == "user"
}
