package zed

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// maxThread bounds one thread's data, compressed and expanded: a larger
// one is a problem, not read.
const maxThread = 256 << 20

// threadColumns are the threads table's columns the reader uses, in the
// order it scans them; the ones an older database lacks (parent_id,
// folder_paths and created_at came later) read as NULL.
var threadColumns = []string{"id", "summary", "updated_at", "data_type", "parent_id", "folder_paths", "created_at"}

// readDB reads every thread of Zed's threads.db, parents before the
// sub-agents' threads they ran.
func readDB(ctx context.Context, path string, wal bool) (*importer.Result, error) {
	db, err := importer.OpenSQLiteTables(ctx, Tool, "Zed threads", path, wal, "threads")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	have, err := importer.SQLiteColumns(ctx, db, "threads")
	if err != nil {
		return nil, importer.SQLiteError(Tool, path, err)
	}
	if !have["id"] || !have["data"] {
		return nil, fmt.Errorf("zed: %s: the threads table has no id or data column", path)
	}
	rows, err := db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, threadColumns)+
		", CASE WHEN octet_length(data) > ? THEN NULL ELSE data END, octet_length(data) FROM threads ORDER BY rowid", maxThread)
	if err != nil {
		return nil, importer.SQLiteError(Tool, path, err)
	}
	defer rows.Close()
	res := &importer.Result{}
	var threads []*thread
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(threadColumns)+2)
		if err != nil {
			return nil, importer.SQLiteError(Tool, path, err)
		}
		str := importer.SQLiteString
		id := str(v[0])
		if id == "" || strings.ContainsAny(id, "\r\n") {
			res.Problemf(path, 0, "a thread without a usable id")
			continue
		}
		if importer.SQLiteFloat(v[len(v)-1]) > maxThread {
			res.Problemf(path, 0, "thread "+importer.Clip(id, 80)+": larger than "+strconv.Itoa(maxThread>>20)+" MiB")
			continue
		}
		data, err := expand(str(v[3]), v[len(v)-2])
		if err != nil {
			res.Problemf(path, 0, "thread "+importer.Clip(id, 80)+": "+err.Error())
			continue
		}
		t := &thread{
			ID: id, Title: str(v[1]), Path: path, Parent: str(v[4]),
			Cwd:     firstPath(str(v[5])),
			Created: importer.RFC3339Time(str(v[6])), Updated: importer.RFC3339Time(str(v[2])),
		}
		if err := t.decode(data, res); err != nil {
			res.Problemf(path, 0, "thread "+importer.Clip(id, 80)+": "+err.Error())
			continue
		}
		if !utf8.Valid(data) {
			res.Problemf(path, 0, "thread "+importer.Clip(id, 80)+": "+importer.NotUTF8)
		}
		threads = append(threads, t)
	}
	if err := rows.Err(); err != nil {
		return nil, importer.SQLiteError(Tool, path, err)
	}
	res.Sessions = link(threads, res)
	return res, nil
}

// expand is a thread's data as JSON: as stored ("json"), or expanded
// from zstd.
func expand(dataType string, v any) ([]byte, error) {
	var raw []byte
	switch x := v.(type) {
	case []byte:
		raw = x
	case string:
		raw = []byte(x)
	default:
		return nil, fmt.Errorf("no data")
	}
	switch dataType {
	case "json":
		return raw, nil
	case "zstd":
		dec, err := zstd.NewReader(bytes.NewReader(raw), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxThread))
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		out, err := io.ReadAll(io.LimitReader(dec, maxThread+1))
		if err != nil {
			return nil, fmt.Errorf("its zstd data is damaged: %w", err)
		}
		if len(out) > maxThread {
			return nil, fmt.Errorf("larger than %d MiB expanded", maxThread>>20)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown data type %q", importer.TypeName(dataType))
}

// link makes the sessions of the threads that hold messages: each
// sub-agent's thread a sub-agent session of its parent's, named by an
// agent part after the call that ran it; parents first.
func link(threads []*thread, res *importer.Result) []*importer.Session {
	byID := map[string]*thread{}
	for _, t := range threads {
		byID[t.ID] = t
	}
	var mains, subs []*importer.Session
	for _, t := range threads {
		s := t.session()
		if len(s.Messages) == 0 {
			res.Skip("empty-thread")
			continue
		}
		p := byID[t.Parent]
		if t.Parent == "" || p == nil || p == t {
			if t.Parent != "" {
				res.Skip("orphan-sub-agent")
				continue
			}
			mains = append(mains, s)
			continue
		}
		s.Kind, s.ParentSourceID = loom.KindSubagent, p.ID
		p.b.linkAgent(t.ToolUseID, t.ID)
		subs = append(subs, s)
	}
	return append(mains, subs...)
}

// firstPath is the first of the folder paths Zed keeps for a thread,
// one a line.
func firstPath(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(first)
}
