package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"

	gojson "github.com/goccy/go-json"
	"github.com/loomhq/loom"
	_ "modernc.org/sqlite"
)

// minimal is the second comparison: a store written by hand with a schema
// and file of its own, the least a store needs for the same operations
// with the same guarantees (durable appends in WAL mode with synchronous
// FULL, full-text search, newest-N, the list with counts and last
// prompt, fork and rewind). Each message is one row holding the whole
// message as JSON; its text is stored once, there, and indexed by a
// contentless FTS5 table fed from Go. Its figures are a floor that is
// not loom's schema.
type minimal struct {
	db *sql.DB
	// decode makes its reads decode each message they return into a
	// loom.Message, as loom's reads return them; without it they hand
	// back the stored JSON undecoded.
	decode bool
}

const minimalDSN = "?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"

// minimalSchema is the whole schema of the minimal store. The FTS5 table
// is contentless (the text lives in messages.data only) and allows
// deletes, so that a deleted message's row can leave the index; its
// rowid is the message's rowid.
var minimalSchema = []string{
	`CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, title TEXT NOT NULL, created_at TEXT NOT NULL,
		updated_at TEXT NOT NULL, message_count INTEGER NOT NULL, last_prompt TEXT NOT NULL) STRICT`,
	`CREATE INDEX sessions_recent ON sessions (user_id, updated_at DESC, id DESC)`,
	`CREATE TABLE messages (rowid INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL,
		UNIQUE (session_id, seq)) STRICT`,
	`CREATE VIRTUAL TABLE messages_fts USING fts5 (text, content='', contentless_delete=1, tokenize='porter unicode61')`,
}

func openMinimal(path string) (*minimal, error) {
	db, err := sql.Open("sqlite", "file:"+path+minimalDSN)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &minimal{db: db}, nil
}

func (s *minimal) Close() error { return s.db.Close() }

// createMinimal makes a fresh minimal store at path.
func createMinimal(ctx context.Context, path string) (*minimal, error) {
	removeStore(path)
	s, err := openMinimal(path)
	if err != nil {
		return nil, err
	}
	for _, q := range minimalSchema {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// minimalData is a message as the minimal store keeps it: all of it as
// JSON, but for the session and sequence number, which are columns.
func minimalData(m *loom.Message) (string, error) {
	c := *m
	c.SessionID, c.Seq = "", 0
	b, err := json.Marshal(&c)
	return string(b), err
}

// insert writes sessions and their messages, search index included, in
// one transaction. Turns are numbered as loom numbers them (each user
// message opens one) where the messages do not carry them.
func (s *minimal) insert(ctx context.Context, batch []*loom.SessionData) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insS, err := tx.PrepareContext(ctx, `INSERT INTO sessions (id, user_id, title, created_at, updated_at, message_count, last_prompt)
		VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	insM, err := tx.PrepareContext(ctx, `INSERT INTO messages (session_id, seq, data) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	insF, err := tx.PrepareContext(ctx, `INSERT INTO messages_fts (rowid, text) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	for _, d := range batch {
		sess := d.Session
		turn, prompt := 0, ""
		for _, m := range d.Messages {
			if m.Role == loom.RoleUser {
				turn++
				prompt = m.Text()
			}
			if m.Turn == 0 {
				m.Turn = turn
			}
		}
		if _, err := insS.ExecContext(ctx, sess.ID, sess.UserID, sess.Title, loom.FormatTime(sess.CreatedAt),
			loom.FormatTime(sess.UpdatedAt), len(d.Messages), prompt); err != nil {
			return err
		}
		for _, m := range d.Messages {
			data, err := minimalData(m)
			if err != nil {
				return err
			}
			res, err := insM.ExecContext(ctx, sess.ID, m.Seq, data)
			if err != nil {
				return err
			}
			rowid, err := res.LastInsertId()
			if err != nil {
				return err
			}
			if _, err := insF.ExecContext(ctx, rowid, m.SearchText()); err != nil {
				return err
			}
		}
	}
	return tx.Commit()
}

// ensureMinimal generates the workload into a minimal store at path
// unless it is already there, and returns the big session's id. The
// workload is walked by generate, as for the store, so the content is the
// same (the ids differ).
func ensureMinimal(ctx context.Context, path string, c config) (string, error) {
	if _, err := os.Stat(path); err == nil {
		s, err := openMinimal(path)
		if err != nil {
			return "", err
		}
		defer s.Close()
		var id string
		if err := s.db.QueryRowContext(ctx, `SELECT id FROM sessions WHERE message_count = ? ORDER BY created_at LIMIT 1`, c.big).Scan(&id); err != nil {
			return "", fmt.Errorf("%s exists but holds no %d-message session; remove it to regenerate", path, c.big)
		}
		return id, nil
	}
	fmt.Fprintf(os.Stderr, "minimal store %s\n", path)
	id, err := generateMinimal(ctx, path, c)
	if err != nil {
		removeStore(path)
	}
	return id, err
}

func generateMinimal(ctx context.Context, path string, c config) (string, error) {
	s, err := createMinimal(ctx, path)
	if err != nil {
		return "", err
	}
	defer s.Close()
	id, err := generate(c, " (minimal store)", func(batch []*loom.SessionData) error { return s.insert(ctx, batch) })
	if err != nil {
		return "", err
	}
	// Not analyzed, as loom's store is not (see ensureStore).
	return id, nil
}

func (s *minimal) newest(ctx context.Context, session string, n int) error {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, data FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT ?`, session, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	var seq int64
	var data []byte
	for rows.Next() {
		if err := rows.Scan(&seq, &data); err != nil {
			return err
		}
		if err := s.decoded(data); err != nil {
			return err
		}
	}
	return rows.Err()
}

// decoded decodes a stored message when s decodes what it reads, with the
// JSON library loom's stores decode with.
func (s *minimal) decoded(data []byte) error {
	if !s.decode {
		return nil
	}
	var m loom.Message
	return gojson.Unmarshal(data, &m)
}

func (s *minimal) list(ctx context.Context, user string, n int) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, title, created_at, updated_at, message_count, last_prompt
		FROM sessions WHERE user_id = ? ORDER BY updated_at DESC, id DESC LIMIT ?`, user, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	var id, title, created, updated, prompt string
	var count int
	for rows.Next() {
		if err := rows.Scan(&id, &title, &created, &updated, &count, &prompt); err != nil {
			return err
		}
	}
	return rows.Err()
}

// search ranks the matching messages of user's sessions. The index holds
// no text, so there is no snippet: each hit gives the whole message.
func (s *minimal) search(ctx context.Context, user, match string, n int) error {
	rows, err := s.db.QueryContext(ctx, `SELECT m.session_id, m.seq, -f.rank, m.data
		FROM messages_fts f JOIN messages m ON m.rowid = f.rowid
		JOIN sessions s ON s.id = m.session_id
		WHERE messages_fts MATCH ? AND s.user_id = ?
		ORDER BY f.rank LIMIT ?`, match, user, n)
	if err != nil {
		return err
	}
	defer rows.Close()
	var sid string
	var data []byte
	var seq int64
	var score float64
	found := 0
	for rows.Next() {
		if err := rows.Scan(&sid, &seq, &score, &data); err != nil {
			return err
		}
		if err := s.decoded(data); err != nil {
			return err
		}
		found++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if found == 0 {
		return fmt.Errorf("minimal store search found nothing")
	}
	return nil
}

// minimalImportRate inserts n generated messages (importBatches) into a
// fresh minimal store, a transaction to each batch, search index
// included, and returns messages per second; generating them is not
// timed.
func minimalImportRate(ctx context.Context, path string, n int) (float64, error) {
	s, err := createMinimal(ctx, path)
	if err != nil {
		return 0, err
	}
	defer func() {
		s.Close()
		removeStore(path)
	}()
	return importRate(importBatches(n), n, func(b []*loom.SessionData) error { return s.insert(ctx, b) })
}

// sizeOnDisk checkpoints the store at path into its main file (a plain
// connection, nothing else changed) and returns the size of the file and
// its write-ahead log, in bytes, less the file's free pages. A freshly
// generated store has none, so this is its file size; on a store reused
// by later runs, the pages that the measurements' deleted sessions freed
// are not counted as the store's size.
func sizeOnDisk(ctx context.Context, path string) (int64, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var busy, logged, done int
	if err := db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &done); err != nil {
		return 0, err
	}
	if busy != 0 {
		return 0, fmt.Errorf("checkpoint of %s was blocked", path)
	}
	var free, pageSize int64
	if err := db.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil {
		return 0, err
	}
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return 0, err
	}
	size := -free * pageSize
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return 0, err
		}
		size += fi.Size()
	}
	return size, nil
}
