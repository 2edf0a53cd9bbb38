package goose

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// header is the first line of a JSONL session file: the session's
// metadata.
type header struct {
	WorkingDir              string `json:"working_dir"`
	Description             string `json:"description"`
	MessageCount            *int64 `json:"message_count"`
	InputTokens             *int64 `json:"input_tokens"`
	OutputTokens            *int64 `json:"output_tokens"`
	AccumulatedInputTokens  *int64 `json:"accumulated_input_tokens"`
	AccumulatedOutputTokens *int64 `json:"accumulated_output_tokens"`
}

// line is a message line.
type line struct {
	ID       string          `json:"id"`
	Role     string          `json:"role"`
	Created  float64         `json:"created"`
	Content  json.RawMessage `json:"content"`
	Metadata visibility      `json:"metadata"`
}

// readJSONL reads one session file of the goose versions before the
// database: <session id>.jsonl, its first line the session's metadata
// (when it is not a message: goose reads a file without one too), each
// other line a message.
func readJSONL(ctx context.Context, path string) (*importer.Result, error) {
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &importer.Result{}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	s := &importer.Session{SourceID: id, Kind: loom.KindMain, Path: path}
	var h header
	c := newConv(res, "", "")
	err = importer.Lines(ctx, f, func(n int, b []byte) error {
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			return nil
		}
		var probe struct {
			Role    *string         `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(b, &probe); err != nil {
			res.Problemf(path, n, "not valid JSON: "+importer.Excerpt(err.Error()))
			return nil
		}
		if probe.Role == nil {
			if n == 1 && json.Unmarshal(b, &h) == nil {
				s.Cwd, s.Title = h.WorkingDir, strings.TrimSpace(h.Description)
				return nil
			}
			res.Skip("unknown:no-role")
			return nil
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			res.Problemf(path, n, "not a goose message: "+importer.Excerpt(err.Error()))
			return nil
		}
		mid := l.ID
		if mid == "" || strings.ContainsAny(mid, "\n\r") {
			// Older goose gave messages no id: a line is named by
			// its place in the file, which goose only appends to.
			mid = id + ":" + strconv.Itoa(n)
		}
		c.add(source{ID: mid, Role: l.Role, Created: seconds(l.Created), Content: l.Content, Meta: l.Metadata, File: path, Line: n})
		return nil
	}, func(n int) { res.Problemf(path, n, "line longer than "+strconv.Itoa(importer.MaxLine>>20)+" MB") })
	if err != nil {
		return nil, err
	}
	s.Messages = c.finish(usage(h.AccumulatedInputTokens, h.AccumulatedOutputTokens, h.InputTokens, h.OutputTokens))
	if len(s.Messages) == 0 {
		res.Skip("empty-session")
		return res, nil
	}
	s.CreatedAt = s.Messages[0].CreatedAt
	s.UpdatedAt = s.Messages[len(s.Messages)-1].CreatedAt
	res.Sessions = []*importer.Session{s}
	return res, nil
}
