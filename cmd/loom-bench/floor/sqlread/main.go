// Command sqlread opens a loom SQLite store and does one read, as the
// floor of the loom command that does it:
//
//	sqlread list DB USER          the 20 most recent sessions (loom session list)
//	sqlread search DB USER WORD   the top 20 matches with snippets (loom search)
//	sqlread hook DB USER          hook JSON on stdin; exits when the session's
//	                              files are as recorded (loom session import --hook)
//	sqlread statusline DB USER    Claude Code's status line JSON on stdin; the
//	                              session's, today's and the last five hours'
//	                              cost from the usage roll-up (loom usage statusline)
package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: sqlread list|search|hook DB USER [WORD]")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3], os.Args[4:]); err != nil {
		fmt.Fprintln(os.Stderr, "sqlread:", err)
		os.Exit(1)
	}
}

func run(mode, path, user string, args []string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)&_pragma=query_only(1)&_pragma=cache_size(-16000)")
	if err != nil {
		return err
	}
	defer db.Close()
	switch mode {
	case "list":
		return rows(db, 4, `SELECT id, title, message_count, last_prompt FROM sessions
			WHERE user_id = ? AND deleted_at IS NULL ORDER BY updated_at DESC, id DESC LIMIT 20`, user)
	case "search":
		if len(args) != 1 {
			return fmt.Errorf("search wants a word")
		}
		return rows(db, 4, `SELECT m.session_id, m.seq, -bodies_fts.rank, snippet(bodies_fts, 0, '**', '**', '…', 24)
			FROM bodies_fts CROSS JOIN messages m ON m.body_id = bodies_fts.rowid CROSS JOIN sessions s ON s.id = m.session_id
			WHERE bodies_fts MATCH ? AND s.user_id = ? AND s.deleted_at IS NULL
			ORDER BY bodies_fts.rank LIMIT 20`, `"`+args[0]+`"`, user)
	case "hook":
		var in struct {
			TranscriptPath string `json:"transcript_path"`
		}
		if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
			return err
		}
		return unchanged(db, user, in.TranscriptPath)
	case "statusline":
		var in struct {
			SessionID string `json:"session_id"`
		}
		if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
			return err
		}
		return statusline(db, user, in.SessionID)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// rows runs q and prints its rows of n columns.
func rows(db *sql.DB, n int, q string, args ...any) error {
	rs, err := db.Query(q, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return err
		}
		fmt.Println(vals...)
	}
	return rs.Err()
}

// statusline prints the stored cost of the session, of today (UTC) and
// of the last five hours, read from usage_slices.
func statusline(db *sql.DB, user, session string) error {
	now := time.Now().UTC()
	var s, d, b float64
	if err := db.QueryRow(`SELECT coalesce(sum(u.cost_usd), 0) FROM usage_slices u
		WHERE u.session_id = (SELECT id FROM sessions WHERE user_id = ? AND key = ?)`, user, "claude-code:"+session).Scan(&s); err != nil {
		return err
	}
	if err := db.QueryRow(`SELECT coalesce(sum(cost_usd), 0) FROM usage_slices WHERE user_id = ? AND live = 1 AND hour >= ?`,
		user, now.Format("2006-01-02")+"T00").Scan(&d); err != nil {
		return err
	}
	if err := db.QueryRow(`SELECT coalesce(sum(cost_usd), 0) FROM usage_slices WHERE user_id = ? AND live = 1 AND hour >= ?`,
		user, now.Add(-5*time.Hour).Format("2006-01-02T15")).Scan(&b); err != nil {
		return err
	}
	fmt.Printf("session $%.2f · today $%.2f · block $%.2f\n", s, d, b)
	return nil
}

// unchanged fails unless every file recorded for the bundle is as
// recorded.
func unchanged(db *sql.DB, user, bundle string) error {
	rs, err := db.Query(`SELECT path, size, mtime_ns FROM import_files WHERE user_id = ? AND bundle = ?`, user, bundle)
	if err != nil {
		return err
	}
	defer rs.Close()
	n := 0
	for rs.Next() {
		var p string
		var size, mtime int64
		if err := rs.Scan(&p, &size, &mtime); err != nil {
			return err
		}
		fi, err := os.Stat(p)
		if err != nil || fi.Size() != size || fi.ModTime().UnixNano() != mtime {
			return fmt.Errorf("%s changed", p)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s was never imported", bundle)
	}
	return rs.Err()
}
