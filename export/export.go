// Package export writes loom sessions to files and reads them back.
//
// jsonl and json carry every field of the store and round-trip through
// Read; markdown and html are for people. Read is strict: a record loom does not
// know, or one that breaks an import rule (loom.SessionData.Validate), is
// refused with its line, and nothing of the file is returned.
package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/loomhq/loom"
)

// Format is an export format.
type Format string

// The export formats.
const (
	// JSONL is one JSON object a line: a session record followed by one
	// record per message, for each session in turn.
	JSONL Format = "jsonl"
	// JSON is one indented Document.
	JSON Format = "json"
	// Markdown is a readable document, not read back.
	Markdown Format = "markdown"
	// HTML is one self-contained page, as the dashboard shows the
	// sessions, not read back.
	HTML Format = "html"
)

// ParseFormat returns the format a name stands for ("md" is Markdown),
// and false for a name that is not a format.
func ParseFormat(name string) (Format, bool) {
	switch f := Format(name); f {
	case JSONL, JSON, Markdown, HTML:
		return f, true
	case "md":
		return Markdown, true
	}
	return "", false
}

// Version is the version of the json Document this package writes and
// the only one it reads.
const Version = 1

// Document is the json export.
type Document struct {
	Version  int                 `json:"version"`
	Sessions []*loom.SessionData `json:"sessions"`
}

// record is one line of a jsonl export.
type record struct {
	Type    string        `json:"type"`
	Session *loom.Session `json:"session,omitempty"`
	Message *loom.Message `json:"message,omitempty"`
}

// Write writes sessions, each with all its messages, in format f. A
// session's lock belongs to a running process, not to its history, so it
// is left out.
func Write(w io.Writer, f Format, data []*loom.SessionData) error {
	switch f {
	case JSONL:
		return writeJSONL(w, data)
	case JSON:
		return writeDocument(w, data)
	case Markdown:
		return writeMarkdown(w, data)
	case HTML:
		return writeHTML(w, data)
	}
	return loom.Errorf(loom.EINVALID, "unknown export format %q", f)
}

// withoutLock returns a copy of s without its lock.
func withoutLock(s *loom.Session) *loom.Session {
	c := *s
	c.Lock = nil
	return &c
}

func writeJSONL(w io.Writer, data []*loom.SessionData) error {
	bw := bufio.NewWriter(w)
	line := func(rec record) error {
		b, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encode %s record: %w", rec.Type, err)
		}
		bw.Write(b)
		return bw.WriteByte('\n')
	}
	for _, d := range data {
		if err := line(record{Type: "session", Session: withoutLock(d.Session)}); err != nil {
			return err
		}
		for _, m := range d.Messages {
			if err := line(record{Type: "message", Message: m}); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

func writeDocument(w io.Writer, data []*loom.SessionData) error {
	doc := Document{Version: Version, Sessions: make([]*loom.SessionData, len(data))}
	for i, d := range data {
		msgs := d.Messages
		if msgs == nil {
			msgs = []*loom.Message{}
		}
		doc.Sessions[i] = &loom.SessionData{Session: withoutLock(d.Session), Messages: msgs}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// Order puts a whole store's sessions in export order: oldest first, each
// followed by its sub-agent sessions, so that a parent always comes
// before its children. It sorts all in place.
func Order(all []*loom.Session) []*loom.Session {
	sortOldestFirst(all)
	present := make(map[string]bool, len(all))
	for _, s := range all {
		present[s.ID] = true
	}
	ids := make([]string, 0, 2*len(all))
	for _, s := range all {
		if s.Kind != loom.KindSubagent || !present[s.ParentID] {
			ids = append(ids, s.ID)
		}
	}
	// A cycle of parent links (which the store never makes) has no root;
	// nothing may be lost from an export, so every session follows the
	// roots, and ArrangeFamily places each once.
	for _, s := range all {
		ids = append(ids, s.ID)
	}
	return loom.ArrangeFamily(loom.FamilyQuery{IDs: ids, SubagentsOnly: true}, all)
}

func sortOldestFirst(ss []*loom.Session) {
	slices.SortStableFunc(ss, func(a, b *loom.Session) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
