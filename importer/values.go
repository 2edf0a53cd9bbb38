package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/loomhq/loom"
)

// What the JSON-lines readers share to read the values of a record.

// IsNull reports whether raw is absent or JSON null.
func IsNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// JSONText is a JSON value as text: a string as itself, anything else
// as its JSON; "" when it is absent or null.
func JSONText(raw json.RawMessage) string {
	if IsNull(raw) {
		return ""
	}
	raw = bytes.TrimSpace(raw)
	if s, ok := loom.JSONString(raw); ok {
		return s
	}
	return string(raw)
}

// ArgsObject is a tool call's arguments as a JSON object, for a tool
// part's Input: absent or null is {}, and any other value (or text that
// is not JSON) is wrapped as {"value": …}.
func ArgsObject(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return json.RawMessage(`{}`)
	case raw[0] == '{' && json.Valid(raw):
		return raw
	case !json.Valid(raw):
		b, _ := json.Marshal(map[string]string{"value": string(raw)})
		return b
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"value": raw})
	return b
}

// LineID is an id read from a file, trimmed, when it is one line of
// printable characters of at most 200 bytes; "" otherwise.
func LineID(s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) || len(s) > 200 {
		return ""
	}
	return s
}

// Count keeps a token count read from a file within what a sum cannot
// overflow: never below 0, never above 2^48.
func Count(n int64) int64 {
	return min(max(n, 0), 1<<48)
}

// RecordLines calls record with each non-blank line of r, trimmed, and
// its number (Lines); record reports whether the line was a record of
// the tool's. It returns how many lines there were and how many were
// records. Reading that stops is an error when ctx ended (its error) or
// before any record (with tool and path), else a problem in res and the
// records read so far stand.
func RecordLines(ctx context.Context, tool, path string, r io.Reader, res *Result, record func(n int, line []byte) bool) (lines, kept int, err error) {
	err = Lines(ctx, r, func(n int, b []byte) error {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			return nil
		}
		lines++
		if record(n, b) {
			kept++
		}
		return nil
	}, res.TooLong(path))
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return lines, kept, ctx.Err()
	case kept == 0:
		return lines, kept, fmt.Errorf("%s: %s: %w", tool, path, err)
	default:
		res.Problemf(path, 0, "reading stopped: "+err.Error())
	}
	return lines, kept, nil
}
