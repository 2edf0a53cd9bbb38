package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/internal/sqlstore"
)

// importChunk is how many rows one INSERT of an import writes. The
// driver's cost per statement run (binding, stepping, resetting, and
// database/sql's own) is most of what a row costs in the pure-Go SQLite,
// so rows go in a hundred to a statement.
const importChunk = 100

const (
	importSessionSQL = `INSERT INTO sessions (id, user_id, key, surface, title, description,
		kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
		profile, message_count, turn_count, summary_seq, last_prompt,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
		cache_write_1h_tokens, cost_usd, api_calls, compactions, created_at, updated_at, deleted_at, archived_at,
		git_branch, source_tool, source_version, source_path, team, member)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	importBodiesSQL   = `INSERT INTO bodies (id, parts, content) VALUES `
	importBodyRow     = `(?, ?, ?)`
	importMessagesSQL = `INSERT INTO messages (session_id, seq, id, role, turn, body_id,
		model, provider, input_tokens, output_tokens, reasoning_tokens, cache_read_tokens,
		cache_write_tokens, cache_write_1h_tokens, cost_usd, api_calls, compactions, error, created_at, completed_at) VALUES `
	importMessageRow = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// The columns and values PutEdits writes, many rows a statement.
	importEditsSQL = putEditSQL
	importEditRow  = putEditRow
	editColumns    = 8
)

// ImportRows implements sessionstore.ImportSteps.
func (w writes) ImportRows(ctx context.Context, data []*loom.SessionData) error {
	// A big import's commit leaves the copy into the database file to
	// the checkpointer (checkpoint.go); a small one's is as any write's.
	size := 0
	for _, d := range data {
		for _, m := range d.Messages {
			size += m.Size()
		}
	}
	if size >= bigImport {
		if _, err := w.tx.ExecContext(ctx, `PRAGMA wal_autocheckpoint = 0`); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		w.s.bulk.Store(true)
	}
	return w.s.importTx(ctx, w.tx, data)
}

// importTx writes data, validated, inside tx, recording nothing: what
// Import does, and what applying another host's import does.
func (s *Store) importTx(ctx context.Context, tx *sql.Tx, data []*loom.SessionData) error {
	for _, d := range data {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE id = ?`, d.Session.ID).Scan(&n); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		if n > 0 {
			return loom.Errorf(loom.ECONFLICT, "session %s already exists", d.Session.ID)
		}
	}
	// The writer is the only one, and this transaction holds it: the
	// bodies take the ids SQLite would give them, chosen here, so that
	// many go in one statement and the messages name them.
	var firstBody int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM bodies`).Scan(&firstBody); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO bulk_load (active) VALUES (1)`); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	// The messages are encoded beside the writer; it is done with
	// them (AssignPartIDs writes their parts) before Import returns.
	rows := make(chan importRows, 8)
	stop, done := make(chan struct{}), make(chan struct{})
	defer func() { close(stop); <-done }()
	go func() {
		defer close(done)
		encodeImport(data, firstBody, rows, stop)
	}()
	w := &importWriter{ctx: ctx, tx: tx, rows: rows}
	defer w.close()
	for _, d := range data {
		if err := w.session(d); err != nil {
			return err
		}
	}
	if err := w.flushEdits(0); err != nil {
		return err
	}
	if err := indexBodies(ctx, tx, firstBody); err != nil {
		return fmt.Errorf("import: index: %w", err)
	}
	// The bodies' edits are stored (encodeImport found them), so that
	// bodies_ai_edits, which a bulk load keeps from firing, need not
	// mark them for the catch-up: no body of an import is marked.
	if _, err := tx.ExecContext(ctx, `DELETE FROM bulk_load`); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

// importHashSize is how much of the search index FTS5 keeps in memory
// while an import fills it (its hashsize option, 1 MB by default): every
// time that much is pending it writes a segment, and merges segments as
// they pile up. An import's index is written as a few big segments, and
// merged less, with 16 MB; the store's own setting is put back before the
// import commits.
const importHashSize = 16 << 20

// indexBodies fills the search index with the bodies from id first on.
func indexBodies(ctx context.Context, tx *sql.Tx, first int64) error {
	var hashSize int64 = 1 << 20 // FTS5's default
	err := tx.QueryRowContext(ctx, `SELECT v FROM bodies_fts_config WHERE k = 'hashsize'`).Scan(&hashSize)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	const setHashSize = `INSERT INTO bodies_fts (bodies_fts, rank) VALUES ('hashsize', ?)`
	if _, err := tx.ExecContext(ctx, setHashSize, max(hashSize, importHashSize)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO bodies_fts (rowid, content) SELECT id, content FROM bodies WHERE id >= ?`, first); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, setHashSize, hashSize)
	return err
}

// importRows are the arguments of the statements that write up to
// importChunk messages of one session and their bodies.
type importRows struct {
	n                int
	first, last      int64 // the messages' seqs
	bodies, messages []any
	// The bodies that hold tool calls, whose edits the writer finds,
	// and the working directory their paths are resolved against.
	tools []toolBody
	cwd   string
	err   error
}

// toolBody is a body of an import with a tool call: its id and its
// message's parts, with their ids.
type toolBody struct {
	id    int64
	parts []loom.Part
}

// encodeImport sends the rows of data's messages to out, a session's
// after the one before, their bodies numbered from body on, with the
// bodies that hold tool calls. It runs beside the writer, so that
// encoding the parts as JSON and gathering the search text (a tenth of
// an import's CPU time) is not added to the writing. It stops at the
// first error, which it sends, or when stop is closed.
func encodeImport(data []*loom.SessionData, body int64, out chan<- importRows, stop <-chan struct{}) {
	for _, d := range data {
		for msgs := d.Messages; len(msgs) > 0; {
			n := min(len(msgs), importChunk)
			r := importRows{n: n, first: msgs[0].Seq, last: msgs[n-1].Seq, cwd: d.Session.Cwd,
				bodies: make([]any, 0, 3*n), messages: make([]any, 0, 20*n)}
			for i, m := range msgs[:n] {
				parts, text, err := sqlstore.EncodeBody(m)
				if err != nil {
					r.err = err
					break
				}
				id := body + int64(i)
				if slices.ContainsFunc(m.Parts, func(p loom.Part) bool { return p.Type == loom.PartTool }) {
					r.tools = append(r.tools, toolBody{id, m.Parts})
				}
				u := m.Usage
				r.bodies = append(r.bodies, id, parts, text)
				r.messages = append(r.messages, m.SessionID, m.Seq, m.ID, m.Role, m.Turn, id, m.Model, m.Provider,
					u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CacheWrite1hTokens,
					u.CostUSD, u.APICalls, u.Compactions, sqlstore.EncodeError(m.Error), loom.FormatTime(m.CreatedAt), nullTime(m.CompletedAt))
			}
			select {
			case out <- r:
			case <-stop:
				return
			}
			if r.err != nil {
				return
			}
			body += int64(n)
			msgs = msgs[n:]
		}
	}
}

// importWriter writes an import's rows, its statements prepared once per
// import and per number of rows.
type importWriter struct {
	ctx      context.Context
	tx       *sql.Tx
	rows     <-chan importRows
	sessions *sql.Stmt
	bodies   map[int]*sql.Stmt
	messages map[int]*sql.Stmt
	edits    map[int]*sql.Stmt
	// pending are edit rows not yet written: they go in importChunk at a
	// time, as messages do, however few each chunk of messages has.
	pending []any
}

func (w *importWriter) close() {
	if w.sessions != nil {
		w.sessions.Close()
	}
	for _, st := range w.bodies {
		st.Close()
	}
	for _, st := range w.messages {
		st.Close()
	}
	for _, st := range w.edits {
		st.Close()
	}
}

// stmt returns the statement of prefix followed by n rows, prepared once.
func (w *importWriter) stmt(cache *map[int]*sql.Stmt, prefix, row string, n int) (*sql.Stmt, error) {
	if st := (*cache)[n]; st != nil {
		return st, nil
	}
	var b strings.Builder
	b.Grow(len(prefix) + n*(len(row)+2))
	b.WriteString(prefix)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	st, err := w.tx.PrepareContext(w.ctx, b.String())
	if err != nil {
		return nil, err
	}
	if *cache == nil {
		*cache = map[int]*sql.Stmt{}
	}
	(*cache)[n] = st
	return st, nil
}

func (w *importWriter) session(d *loom.SessionData) error {
	x := d.Session
	u := x.Usage
	tool, version, path := sqlstore.SourceColumns(x)
	if w.sessions == nil {
		st, err := w.tx.PrepareContext(w.ctx, importSessionSQL)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		w.sessions = st
	}
	_, err := w.sessions.ExecContext(w.ctx,
		x.ID, x.UserID, nullString(x.Key), x.Surface, x.Title, x.Description, x.Kind,
		nullString(x.ParentID), x.ForkTurn, x.Project.ID, x.Project.Name, x.Project.Root, x.Cwd,
		x.Model, x.Provider, x.Profile, x.MessageCount, x.TurnCount, x.SummarySeq, x.LastPrompt,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CacheWrite1hTokens,
		u.CostUSD, u.APICalls, u.Compactions, loom.FormatTime(x.CreatedAt), loom.FormatTime(x.UpdatedAt),
		nullTime(x.DeletedAt), nullTime(x.ArchivedAt), x.GitBranch, tool, version, path, x.Team, x.Member)
	if isUnique(err) {
		return loom.Errorf(loom.ECONFLICT, "import %s: another session already has key %q", x.ID, x.Key)
	}
	if err != nil {
		return fmt.Errorf("import %s: %w", x.ID, err)
	}
	for left := len(d.Messages); left > 0; {
		r := <-w.rows
		if r.err != nil {
			return r.err
		}
		if err := w.messageRows(x.ID, r); err != nil {
			return err
		}
		left -= r.n
	}
	return nil
}

// messageRows writes r's bodies and messages, one statement each.
func (w *importWriter) messageRows(sessionID string, r importRows) error {
	st, err := w.stmt(&w.bodies, importBodiesSQL, importBodyRow, r.n)
	if err != nil {
		return fmt.Errorf("import %s: %w", sessionID, err)
	}
	if _, err := st.ExecContext(w.ctx, r.bodies...); err != nil {
		return fmt.Errorf("import %s: %w", sessionID, err)
	}
	st, err = w.stmt(&w.messages, importMessagesSQL, importMessageRow, r.n)
	if err != nil {
		return fmt.Errorf("import %s: %w", sessionID, err)
	}
	if _, err := st.ExecContext(w.ctx, r.messages...); err != nil {
		return fmt.Errorf("import %s messages %d–%d: %w", sessionID, r.first, r.last, err)
	}
	// The edits of r's bodies, found by the writer: the encoder takes
	// longer over a chunk than the writer does, which would otherwise
	// wait for the next.
	//
	// They are those the catch-up (fileedit.Index) would read from the
	// stored body, found without decoding it again: of the parts once
	// EncodeBody gave them their ids, with the working directory of the
	// oldest session reading the body, which for a body just imported
	// is its own session's (a new session reads only the rows stored
	// under its id).
	for _, b := range r.tools {
		for _, e := range fileedit.FromParts(b.id, b.parts, r.cwd) {
			w.pending = append(w.pending, e.Body, e.N, e.PartID, e.Tool, e.Op, e.Path, e.From, sqlstore.PackLines(e.Lines))
		}
	}
	return w.flushEdits(importChunk)
}

// flushEdits writes the pending edit rows, importChunk to a statement,
// until fewer than least are left.
func (w *importWriter) flushEdits(least int) error {
	for len(w.pending) > 0 && len(w.pending) >= least*editColumns {
		n := min(len(w.pending)/editColumns, importChunk)
		st, err := w.stmt(&w.edits, importEditsSQL, importEditRow, n)
		if err != nil {
			return fmt.Errorf("import: edit index: %w", err)
		}
		if _, err := st.ExecContext(w.ctx, w.pending[:n*editColumns]...); err != nil {
			return fmt.Errorf("import: edit index: %w", err)
		}
		w.pending = w.pending[n*editColumns:]
	}
	return nil
}
