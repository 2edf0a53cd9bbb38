package openclaw

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/pi"
)

// dbName is the per-agent database OpenClaw keeps its sessions in
// (agents/<agent>/agent/openclaw-agent.sqlite), since its transcripts
// left the JSONL files.
const dbName = "openclaw-agent.sqlite"

// maxEvent bounds one transcript event, as OpenClaw's own schema does
// (4 MiB, compressed or not).
const maxEvent = 4 << 20

// windowColumns are session_windows' columns the reader uses, in the
// order it scans them.
var windowColumns = []string{"session_id", "session_key", "parent_session_key", "display_name", "created_at"}

// readDB reads every session of an agent's database: each session
// window's transcript events, in order, are a session file of pi's
// format (header, entry tree), which pi's reader reads. A window whose
// parent_session_key names another window's session key is a sub-agent
// of that window's session.
func readDB(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path, db, err := importer.OpenDBBundle(ctx, Tool, "OpenClaw", b, "session_windows", "transcript_events")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	fail := func(err error) error { return importer.SQLiteError(Tool, path, err) }
	have, err := importer.SQLiteColumns(ctx, db, "session_windows")
	if err != nil {
		return nil, fail(err)
	}
	rows, err := db.QueryContext(ctx, "SELECT "+importer.SQLiteSelect(have, windowColumns)+" FROM session_windows ORDER BY created_at, session_id")
	if err != nil {
		return nil, fail(err)
	}
	type window struct{ id, key, parent, title string }
	var windows []window
	byKey := map[string]string{}
	for rows.Next() {
		v, err := importer.SQLiteRow(rows, len(windowColumns))
		if err != nil {
			rows.Close()
			return nil, fail(err)
		}
		w := window{importer.SQLiteString(v[0]), importer.SQLiteString(v[1]), importer.SQLiteString(v[2]), strings.TrimSpace(importer.SQLiteString(v[3]))}
		windows = append(windows, w)
		byKey[w.key] = w.id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fail(err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxEvent))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	res := &importer.Result{}
	for _, w := range windows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		events, err := transcript(ctx, db, dec, w.id, path, res)
		if err != nil {
			return nil, fail(err)
		}
		r, err := pi.ReadAs(ctx, Tool, path, bytes.NewReader(events))
		if err != nil {
			res.Problemf(path, 0, fmt.Sprintf("session %s: %v", importer.LineID(w.id), err))
			continue
		}
		for _, s := range r.Sessions {
			if s.Kind == loom.KindMain {
				s.Title = importer.Clip(w.title, 200)
				if p := byKey[w.parent]; w.parent != "" && p != "" && p != s.SourceID {
					s.Kind, s.ParentSourceID = loom.KindSubagent, p
				}
			}
		}
		res.Sessions = append(res.Sessions, r.Sessions...)
		for k, n := range r.Skipped {
			for range n {
				res.Skip(k)
			}
		}
		res.Problems = append(res.Problems, r.Problems...)
	}
	return res, nil
}

// transcript is the events of session id, one a line, as a session
// file holds them; an event that cannot be read is a problem.
func transcript(ctx context.Context, db *sql.DB, dec *zstd.Decoder, id, path string, res *importer.Result) ([]byte, error) {
	rows, err := db.QueryContext(ctx, "SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq", id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var buf bytes.Buffer
	for rows.Next() {
		var seq int64
		var text sql.NullString
		var packed []byte
		if err := rows.Scan(&seq, &text, &packed); err != nil {
			return nil, err
		}
		line := []byte(text.String)
		if !text.Valid {
			if len(packed) > maxEvent {
				res.Problemf(path, 0, fmt.Sprintf("session %s, event %d: larger than %d bytes", importer.LineID(id), seq, maxEvent))
				continue
			}
			line, err = dec.DecodeAll(packed, nil)
			if err != nil || len(line) > maxEvent {
				res.Problemf(path, 0, fmt.Sprintf("session %s, event %d: not a compressed event", importer.LineID(id), seq))
				continue
			}
		}
		if buf.Len()+len(line) > importer.MaxFile {
			res.Problemf(path, 0, fmt.Sprintf("session %s: transcript larger than %d bytes, cut", importer.LineID(id), importer.MaxFile))
			break
		}
		buf.Write(bytes.ReplaceAll(line, []byte("\n"), []byte(" ")))
		buf.WriteByte('\n')
	}
	return buf.Bytes(), rows.Err()
}

// CountSessions counts an agent database's session windows; a
// transcript is one session.
func (Format) CountSessions(ctx context.Context, b importer.Bundle) (int, error) {
	if filepath.Base(b.Name()) != dbName {
		return 1, nil
	}
	return importer.CountSQLite(ctx, Tool, b, "SELECT count(*) FROM session_windows", "session_windows")
}
