//go:build ignore

// Command generate writes the schema-5 store fixtures that the engines'
// migration tests load: a store written by loom before forks read through
// spans (schema 5, commit fe153ee), when a fork copied its parent's rows
// and a rewind moved the later ones. It must run with that commit's
// code, not this one's:
//
//	git archive fe153ee | tar -x -C /tmp/loom5
//	cp internal/testkit/storetest/testdata/schema5/generate.go /tmp/loom5/generate.go
//	cd /tmp/loom5 && go run generate.go -out $OLDPWD/internal/testkit/storetest/testdata/schema5
//
// For each engine it writes the rows of sessions, messages and bodies,
// and the SHA-256 of what the store read back (storetest.Reads, copied
// below as it was then): the migrated store must read the same.
package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/postgres"
	"github.com/loomhq/loom/sqlite"
)

func main() {
	out := flag.String("out", ".", "directory to write the fixtures to")
	pg := flag.String("postgres", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL server (a schema is made and dropped)")
	flag.Parse()
	ctx := context.Background()
	if err := run(ctx, *out, *pg); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out, pgURL string) error {
	dir, err := os.MkdirTemp("", "schema5")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sq, err := sqlite.Open(ctx, filepath.Join(dir, "sessions.db"))
	if err != nil {
		return err
	}
	defer sq.Close()
	if err := fixture(ctx, sq, func(table string) (any, error) { return sqliteRows(sq.DB(), table) }, filepath.Join(out, "sqlite.json")); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("loom_schema5_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	pst, err := postgres.Open(ctx, pgURL+"&search_path="+schema)
	if err != nil {
		return err
	}
	defer pst.Close()
	return fixture(ctx, pst, func(table string) (any, error) {
		cols := "t"
		if table == "bodies" {
			cols = "json_build_object('id', t.id, 'parts', t.parts, 'content', t.content)"
		}
		var rows json.RawMessage
		err := pst.Pool().QueryRow(ctx, `SELECT coalesce(json_agg(`+cols+` ORDER BY 1), '[]') FROM `+table+` t`).Scan(&rows)
		return rows, err
	}, filepath.Join(out, "postgres.json"))
}

// fixture writes the sessions into st, then its rows and reads to path.
func fixture(ctx context.Context, st loom.Store, rows func(table string) (any, error), path string) error {
	ids, err := write(ctx, st)
	if err != nil {
		return err
	}
	f := map[string]any{"ids": ids}
	tables := map[string]any{}
	for _, t := range []string{"sessions", "messages", "bodies"} {
		if tables[t], err = rows(t); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	f["tables"] = tables
	reads, err := Reads(ctx, st, "alice", ids)
	if err != nil {
		return err
	}
	// What was read is kept as its SHA-256: the migrated store must read
	// it byte for byte.
	sums := map[string]string{}
	for name, v := range reads {
		sums[name] = fmt.Sprintf("%x", sha256.Sum256(v))
	}
	f["reads"] = sums
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func sqliteRows(db *sql.DB, table string) (any, error) {
	rows, err := db.Query(`SELECT * FROM ` + table + ` ORDER BY 1, 2`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []map[string]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := map[string]any{}
		for i, c := range cols {
			if b, ok := vals[i].([]byte); ok {
				vals[i] = string(b)
			}
			row[c] = vals[i]
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// write makes the sessions of the fixture: forks, forks of forks, a
// fork written to, rewinds, a compaction, a sub-agent, a purged parent,
// a trashed one, an archived one. It returns every session's id.
func write(ctx context.Context, st loom.Store) ([]string, error) {
	var ids []string
	var err error
	must := func(e error) {
		if err == nil && e != nil {
			err = e
		}
	}
	session := func(key string) *loom.Session {
		s := &loom.Session{ID: loom.NewID(), UserID: "alice", Key: key, Project: loom.Project{ID: "0123456789abcdef", Name: "api", Root: "/src/api"}, Model: "m1"}
		ids = append(ids, s.ID)
		return s
	}
	txt := func(role, s string) *loom.Message {
		return &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: s}}}
	}
	turn := func(s *loom.Session, name string, n int) {
		q := txt(loom.RoleUser, fmt.Sprintf("question %s%d", name, n))
		a := &loom.Message{Role: loom.RoleAssistant, Model: "m1", Provider: "p1",
			Usage: loom.Usage{InputTokens: int64(10 * n), OutputTokens: int64(n), CostUSD: 0.25, APICalls: 1},
			Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprintf("answer %s%d zebra%d", name, n, n)},
				{Type: loom.PartTool, CallID: fmt.Sprintf("c%d", n), Name: "read_file", Status: loom.ToolCompleted,
					Input: json.RawMessage(`{"path":"f.go"}`), Output: json.RawMessage(`"package f"`)}}}
		must(st.Append(ctx, s, q, a))
	}
	fork := func(id string, opts loom.ForkOptions) *loom.Session {
		f, e := st.Fork(ctx, id, opts)
		must(e)
		if f == nil {
			return &loom.Session{}
		}
		ids = append(ids, f.ID)
		return f
	}
	rewind := func(id string, t int) *loom.Session {
		f, e := st.Rewind(ctx, id, loom.RewindOptions{Turn: t})
		must(e)
		if f == nil {
			return &loom.Session{}
		}
		ids = append(ids, f.ID)
		return f
	}

	a := session("cli:a")
	turn(a, "a", 1)
	turn(a, "a", 2)
	sum := txt(loom.RoleSummary, "summary of two turns")
	sum.Usage = loom.Usage{Compactions: 1, InputTokens: 50, APICalls: 1}
	must(st.Append(ctx, a, sum))
	turn(a, "a", 3)
	turn(a, "a", 4)
	sub := session("")
	sub.Kind, sub.ParentID, sub.Key = loom.KindSubagent, a.ID, ""
	must(st.Append(ctx, sub, txt(loom.RoleUser, "subagent question"), txt(loom.RoleAssistant, "subagent answer")))
	f1 := fork(a.ID, loom.ForkOptions{Turn: 3})
	turn(f1, "f", 4)
	ff := fork(f1.ID, loom.ForkOptions{})
	must(st.Append(ctx, ff, txt(loom.RoleUser, "question ff5"),
		&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "running now"},
			{Type: loom.PartTool, CallID: "r1", Name: "read_file", Status: loom.ToolRunning, Input: json.RawMessage(`{}`)}}}))
	f2 := fork(a.ID, loom.ForkOptions{})
	if msgs, e := st.Messages(ctx, f2.ID, loom.MessageQuery{Before: 3, Limit: 1}); e == nil && len(msgs) == 1 {
		p := msgs[0].Parts[1]
		p.Output = json.RawMessage(`"written in the fork"`)
		must(st.UpdatePart(ctx, f2.ID, 2, p))
	}

	b := session("cli:b")
	for n := 1; n <= 5; n++ {
		turn(b, "b", n)
	}
	rb := rewind(b.ID, 2)
	b2, e := st.Session(ctx, b.ID)
	must(e)
	if b2 != nil {
		turn(b2, "b'", 3)
	}
	rewind(b.ID, 1)
	fork(rb.ID, loom.ForkOptions{Turn: 3})

	p := session("cli:p")
	turn(p, "p", 1)
	turn(p, "p", 2)
	pf := fork(p.ID, loom.ForkOptions{})
	_, e = st.Delete(ctx, p.ID, loom.DeleteOptions{Purge: true})
	must(e)
	ids = ids[:len(ids)-2]
	ids = append(ids, pf.ID)
	turn(pf, "pf", 3)

	tr := session("cli:t")
	turn(tr, "t", 1)
	turn(tr, "t", 2)
	fork(tr.ID, loom.ForkOptions{Turn: 1})
	_, e = st.Delete(ctx, tr.ID, loom.DeleteOptions{})
	must(e)

	c := session("cli:c")
	turn(c, "c", 1)
	yes := true
	_, e = st.UpdateSession(ctx, c.ID, loom.SessionUpdate{Archived: &yes})
	must(e)
	return ids, err
}

// Reads is what a store reads of sessions ids of user: each session,
// its messages whole and in windows, its context, searches, usage and
// lineage. It is storetest.Reads as it was at schema 5.
func Reads(ctx context.Context, st loom.Store, user string, ids []string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	put := func(name string, v any, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		b, err := json.Marshal(v)
		out[name] = b
		return err
	}
	for _, id := range ids {
		s, err := st.Session(ctx, id)
		if s != nil {
			s.Lock = nil
		}
		if err := put("session "+id, s, err); err != nil {
			return nil, err
		}
		for name, q := range map[string]loom.MessageQuery{
			"all": {}, "newest 3": {Limit: 3}, "2 before 4": {Limit: 2, Before: 4}, "after 2": {After: 2}, "turn 2": {Turn: 2},
		} {
			msgs, err := st.Messages(ctx, id, q)
			if err := put("messages "+name+" "+id, msgs, err); err != nil {
				return nil, err
			}
		}
		msgs, err := st.Context(ctx, id)
		if err := put("context "+id, msgs, err); err != nil {
			return nil, err
		}
		hits, err := st.Search(ctx, loom.SearchQuery{Text: "answer", UserID: user, SessionID: id, Limit: 50})
		if err := put("search in "+id, hits, err); err != nil {
			return nil, err
		}
		u, err := st.Usage(ctx, loom.UsageFilter{UserID: user, SessionID: id})
		if err := put("usage "+id, u, err); err != nil {
			return nil, err
		}
	}
	for _, q := range []string{"zebra1", "question", "read_file", "summary", "written fork", "running"} {
		hits, err := st.Search(ctx, loom.SearchQuery{Text: q, UserID: user, Limit: 100, Archived: true})
		if err := put("search "+q, hits, err); err != nil {
			return nil, err
		}
	}
	u, err := st.Usage(ctx, loom.UsageFilter{UserID: user})
	if err := put("usage", u, err); err != nil {
		return nil, err
	}
	list, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Archived: loom.WithArchived})
	for _, s := range list {
		s.Lock = nil
	}
	if err := put("sessions", list, err); err != nil {
		return nil, err
	}
	fam, err := st.Family(ctx, loom.FamilyQuery{IDs: ids, UserID: user, FromRoot: true})
	if err := put("family", fam, err); err != nil {
		return nil, err
	}
	return out, nil
}
