package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/sqlite"
	_ "modernc.org/sqlite"
)

// baseline is the hand-written comparison: the same file and schema,
// database/sql with the same driver and pragmas, and the plainest SQL for
// each operation, with no layer of loom in between.
type baseline struct{ db *sql.DB }

const baselineDSN = "?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"

func openBaseline(path string) (*baseline, error) {
	db, err := sql.Open("sqlite", "file:"+path+baselineDSN)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &baseline{db: db}, nil
}

func (b *baseline) Close() error { return b.db.Close() }

func (b *baseline) newest(ctx context.Context, session string, n int) error {
	rows, err := b.db.QueryContext(ctx, `SELECT m.id, m.seq, m.role, b.parts, b.content, m.created_at
		FROM messages m JOIN bodies b ON b.id = m.body_id
		WHERE m.session_id = ? ORDER BY m.seq DESC LIMIT ?`, session, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	var id, role, parts, content, created string
	var seq int64
	for rows.Next() {
		if err := rows.Scan(&id, &seq, &role, &parts, &content, &created); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (b *baseline) list(ctx context.Context, user string, n int) error {
	rows, err := b.db.QueryContext(ctx, `SELECT id, title, key, created_at, updated_at, message_count, last_prompt
		FROM sessions WHERE user_id = ? AND deleted_at IS NULL ORDER BY updated_at DESC, id DESC LIMIT ?`, user, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	var id, title, created, updated, prompt string
	var key sql.NullString
	var count int
	for rows.Next() {
		if err := rows.Scan(&id, &title, &key, &created, &updated, &count, &prompt); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (b *baseline) search(ctx context.Context, user, match string, n int) error {
	rows, err := b.db.QueryContext(ctx, `SELECT m.session_id, m.id, m.seq, -bodies_fts.rank,
		snippet(bodies_fts, 0, '**', '**', '…', 24)
		FROM bodies_fts JOIN messages m ON m.body_id = bodies_fts.rowid
		JOIN sessions s ON s.id = m.session_id
		WHERE bodies_fts MATCH ? AND s.user_id = ? AND s.deleted_at IS NULL
		ORDER BY bodies_fts.rank LIMIT ?`, match, user, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	var sid, mid, snip string
	var seq int64
	var score float64
	found := 0
	for rows.Next() {
		if err := rows.Scan(&sid, &mid, &seq, &score, &snip); err != nil {
			return err
		}
		found++
	}
	if found == 0 {
		return fmt.Errorf("baseline search found nothing")
	}
	return rows.Err()
}

func (b *baseline) append(ctx context.Context, session, text string) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := loom.FormatTime(time.Now())
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT message_count + 1 FROM sessions WHERE id = ?`, session).Scan(&seq); err != nil {
		return err
	}
	parts := `[{"id":"` + loom.NewID() + `","type":"text"}]` // the text is the content
	res, err := tx.ExecContext(ctx, `INSERT INTO bodies (parts, content) VALUES (?, ?)`, parts, text)
	if err != nil {
		return err
	}
	body, _ := res.LastInsertId()
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, id, role, turn, body_id, created_at)
		VALUES (?, ?, ?, 'user', ?, ?, ?)`, session, seq, loom.NewID(), seq, body, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET message_count = ?, turn_count = turn_count + 1,
		last_prompt = ?, updated_at = ? WHERE id = ?`, seq, text, now, session); err != nil {
		return err
	}
	return tx.Commit()
}

// fork makes a fork of all of session the plainest way the schema
// allows: a session row (its trigger gives it its own span) and the
// spans that read the source's rows.
func (b *baseline) fork(ctx context.Context, session string) (string, error) {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	id, err := baselineFork(ctx, tx, session, 0, loom.FormatTime(time.Now()))
	if err != nil {
		return "", err
	}
	return id, tx.Commit()
}

// baselineFork makes in tx a fork of session that reads all of it, at
// fork turn turn, updated at updated (nil: session's own time), and
// returns it.
func baselineFork(ctx context.Context, tx *sql.Tx, session string, turn int, updated any) (string, error) {
	id := loom.NewID()
	now := loom.FormatTime(time.Now())
	var last int64
	if err := tx.QueryRowContext(ctx, `SELECT message_count FROM sessions WHERE id = ?`, session).Scan(&last); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, user_id, kind, parent_id, fork_turn, message_count, turn_count, created_at, updated_at)
		SELECT ?, user_id, 'fork', id, ?, message_count, turn_count, ?, coalesce(?, updated_at) FROM sessions WHERE id = ?`, id, turn, now, updated, session); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE spans SET first_seq = ? WHERE session_id = ?`, last+1, id); err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO spans (session_id, first_seq, last_seq, store_id)
		SELECT ?, first_seq, min(last_seq, ?), store_id FROM spans WHERE session_id = ? AND first_seq <= ?`, id, last, session, last); err != nil {
		return "", err
	}
	return id, nil
}

// rewind takes session back to the end of turn the plainest way the
// schema allows: a fork that reads all of it, the session's spans cut
// at the turn's end and a new store for what follows, its counters
// (usage, titles and prompts left as they are). It returns the fork.
func (b *baseline) rewind(ctx context.Context, session string, turn int) (string, error) {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT m.seq FROM spans sp CROSS JOIN messages m ON m.session_id = sp.store_id
		AND m.seq BETWEEN sp.first_seq AND sp.last_seq
		WHERE sp.session_id = ? AND m.turn > ? ORDER BY sp.first_seq, m.seq LIMIT 1`, session, turn).Scan(&next); err != nil {
		return "", err
	}
	id, err := baselineFork(ctx, tx, session, turn, nil)
	if err != nil {
		return "", err
	}
	now := loom.FormatTime(time.Now())
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM spans WHERE session_id = ? AND first_seq >= ?`, []any{session, next}},
		{`UPDATE spans SET last_seq = ? WHERE session_id = ? AND last_seq >= ?`, []any{next - 1, session, next}},
		{`INSERT INTO spans (session_id, first_seq, last_seq, store_id) VALUES (?, ?, 9223372036854775807, ?)`, []any{session, next, loom.NewID()}},
		{`UPDATE sessions SET message_count = ?, turn_count = ?, updated_at = ? WHERE id = ?`, []any{next - 1, turn, now, session}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return "", err
		}
	}
	return id, tx.Commit()
}

// baselineImportRate inserts n generated messages into a fresh store of
// the same schema the plain way (per-row trigger, one transaction) and
// returns messages per second.
func baselineImportRate(ctx context.Context, path string, n int) (float64, error) {
	removeStore(path)
	st, err := sqlite.Open(ctx, path) // creates the schema
	if err != nil {
		return 0, err
	}
	st.Close()
	defer os.Remove(path)
	b, err := openBaseline(path)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	g := newGenerator(7)
	d := g.session("bench", n, loom.Project{ID: "1", Name: "p", Root: "/p"})
	t0 := time.Now()
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	s := d.Session
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, user_id, created_at, updated_at) VALUES (?, ?, ?, ?)`,
		s.ID, s.UserID, loom.FormatTime(s.CreatedAt), loom.FormatTime(s.UpdatedAt)); err != nil {
		return 0, err
	}
	insB, _ := tx.PrepareContext(ctx, `INSERT INTO bodies (parts, content) VALUES (?, ?)`)
	insM, _ := tx.PrepareContext(ctx, `INSERT INTO messages (session_id, seq, id, role, turn, body_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	for _, m := range d.Messages {
		parts, text, _ := sqlstore.EncodeBody(m)
		res, err := insB.ExecContext(ctx, parts, text)
		if err != nil {
			return 0, err
		}
		body, _ := res.LastInsertId()
		if _, err := insM.ExecContext(ctx, s.ID, m.Seq, m.ID, m.Role, 0, body, loom.FormatTime(m.CreatedAt)); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}
