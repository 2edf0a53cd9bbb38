package agents

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/importer"
)

// The rule for bad input, row by row, in the readers whose sessions are
// SQLite databases (docs/import.md, "One damaged record"): in every
// database of the reader's testdata/, one cell that holds a JSON object
// or list (a message's or a part's data, a conversation's document) is
// damaged in one of the ways below; read again, the database gives
// exactly one problem line more, naming it, and every other message is
// kept in its session in its place. A row is the record: what it alone
// held is lost with it, one message (and those under its id) or, where
// a row is a whole conversation's document, that session. A cell the
// reader does not read (damaged, the reading is the same as before,
// problems, messages and texts) is no case: a database holds tables the
// agent keeps for itself.

// rowDamages are the ways one cell is damaged: the names of damages'
// ways that make sense of a cell.
var rowDamages = []string{"garbage", "non-JSON in the middle", "not UTF-8 in a text"}

// isSQLite says whether data is a SQLite database's file.
func isSQLite(data []byte) bool {
	return bytes.HasPrefix(data, []byte("SQLite format 3\x00"))
}

// cell is one value of a table, found by its rowid.
type cell struct {
	table, column string
	rowid         int64
	value         []byte
}

// jsonCells are the cells of the database at path that hold a JSON
// object or list, in its columns of JSON.
func jsonCells(t *testing.T, path string) []cell {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var out []cell
	for _, table := range tables {
		cols, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT name FROM pragma_table_info(%q)`, table))
		if err != nil {
			continue
		}
		var names []string
		for cols.Next() {
			var n string
			if cols.Scan(&n) == nil {
				names = append(names, n)
			}
		}
		cols.Close()
		for _, col := range names {
			// A column of JSON: as many of its values JSON objects or lists
			// as text that is not, or more (a column of text that holds JSON
			// in some rows, a tool's output, is text; blobs, a
			// compressed thread, are neither).
			var text, js int
			isJSON := fmt.Sprintf(`coalesce(CASE WHEN json_valid(%[1]q) THEN json_type(%[1]q) IN ('object', 'array') END, 0)`, col)
			q := fmt.Sprintf(`SELECT coalesce(sum(typeof(%[1]q) = 'text' AND NOT %[3]s), 0), coalesce(sum(%[3]s), 0)
				FROM %[2]q WHERE %[1]q IS NOT NULL AND %[1]q <> ''`, col, table, isJSON)
			if db.QueryRowContext(ctx, q).Scan(&text, &js) != nil || js == 0 || text > js {
				continue
			}
			rs, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT rowid, CAST(%q AS BLOB) FROM %q WHERE %s`, col, table, isJSON))
			if err != nil {
				continue // a table without rowid, a column of another kind
			}
			for rs.Next() {
				c := cell{table: table, column: col}
				if rs.Scan(&c.rowid, &c.value) == nil {
					out = append(out, c)
				}
			}
			rs.Close()
		}
	}
	return out
}

// damageCell writes way d of cell c into the database at path (as text,
// as the agent writes it), and says whether the way could be made.
func damageCell(t *testing.T, r *rand.Rand, path string, c cell, way string) bool {
	t.Helper()
	var bad []byte
	switch way {
	case "garbage":
		bad = []byte("\x01garbage \xff\xfe not a record")
	case "non-JSON in the middle":
		at := len(c.value) / 2
		bad = slices.Concat(c.value[:at], []byte("}\x00 not JSON {"), c.value[at:])
	case "not UTF-8 in a text":
		at := textCut(r, c.value)
		if at < 0 {
			return false
		}
		bad = slices.Concat(c.value[:at], []byte("\xff\xfe"), c.value[at:])
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := fmt.Sprintf(`UPDATE %q SET %q = CAST(? AS TEXT) WHERE rowid = ?`, c.table, c.column)
	if _, err := db.ExecContext(context.Background(), q, bad, c.rowid); err != nil {
		t.Fatalf("%s: %s: %v", path, q, err)
	}
	if _, err := db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return true
}

// fingerprint is what a reading gives, to tell a cell the reader does
// not read: its problems, and each session's messages with their texts.
func fingerprint(res *importer.Result) string {
	var b strings.Builder
	for _, p := range res.Problems {
		b.WriteString(p.String() + "\n")
	}
	for _, s := range res.Sessions {
		fmt.Fprintf(&b, "%s %s %s\n", s.Kind, s.SourceID, s.Title)
		for _, m := range s.Messages {
			fmt.Fprintf(&b, " %s %s", m.ID, m.Role)
			for _, p := range m.Parts {
				fmt.Fprintf(&b, " %s %q %s %s", p.Type, p.Text, p.Input, p.Output)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// damageRows damages, in turn, one cell of the database file of bundle
// b under root in each way, and checks the property for it; it returns
// how many cases it made and how many cells it passed over as not read.
func damageRows(t *testing.T, f importer.Format, r *rand.Rand, b importer.Bundle, file string, before *importer.Result) (cases, unread int) {
	t.Helper()
	ctx := context.Background()
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	put := func(data []byte) {
		for _, side := range []string{"-wal", "-shm", "-journal"} {
			os.Remove(file + side)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	cells := jsonCells(t, file)
	print := fingerprint(before)
	// Each way on cells drawn from the seed, until one the reader reads
	// is found (at most a few tries of each).
	for _, way := range rowDamages {
		for try, i := range r.Perm(len(cells)) {
			if try == 8 {
				break
			}
			c := cells[i]
			if !damageCell(t, r, file, c, way) {
				put(orig)
				continue
			}
			after, err := f.Read(ctx, b)
			put(orig)
			what := fmt.Sprintf("%s table %s row %d column %s made %s", file, c.table, c.rowid, c.column, way)
			if err != nil {
				t.Errorf("%s: the bundle is not read: %v", what, err)
				cases++
				break
			}
			if fingerprint(after) == print {
				unread++
				continue
			}
			cases++
			// A row may be what named or linked a session (a conversation's
			// document naming its sub-agents): as a header, its loss may
			// change the kind of the sessions it linked.
			checkOneRecord(t, f.Tool(), what, file, true, before, after, true)
			break
		}
	}
	return cases, unread
}

// frameMagic opens each frame of Reasonix's log (events.frames): the
// magic, the length of the frame's body and of the record it holds
// (32-bit, big-endian), then the body, the record compressed.
const frameMagic = "RX4F"

// damageFrames damages, in turn, a few frames of a log of frames drawn
// from r: each frame's body made garbage of its length, its header
// kept, so that the frames after it are still found. A frame is a
// record: what it alone held (an event, a batch's time) is lost with
// it.
func damageFrames(t *testing.T, f importer.Format, r *rand.Rand, b importer.Bundle, file string, orig []byte, before *importer.Result) (cases int) {
	t.Helper()
	type frame struct{ body, end int }
	var frames []frame
	for off := 0; off+12 <= len(orig) && string(orig[off:off+4]) == frameMagic; {
		size := int(uint32(orig[off+4])<<24 | uint32(orig[off+5])<<16 | uint32(orig[off+6])<<8 | uint32(orig[off+7]))
		if off+12+size > len(orig) {
			break
		}
		frames = append(frames, frame{off + 12, off + 12 + size})
		off += 12 + size
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	put := func(data []byte) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	for try, i := range r.Perm(len(frames)) {
		if try == 3 {
			break
		}
		fr := frames[i]
		data := bytes.Clone(orig)
		copy(data[fr.body:fr.end], bytes.Repeat([]byte("\x01garbage "), fr.end-fr.body))
		put(data)
		after, err := f.Read(context.Background(), b)
		put(orig)
		what := fmt.Sprintf("%s frame %d made garbage", file, i+1)
		cases++
		if err != nil {
			t.Errorf("%s: the bundle is not read: %v", what, err)
			continue
		}
		checkOneRecord(t, f.Tool(), what, file, false, before, after, false)
	}
	return cases
}
