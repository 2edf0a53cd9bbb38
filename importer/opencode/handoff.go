package opencode

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/shell"
)

var _ handoff.Writer = Format{}

// handoffWait bounds how long a handoff waits for the program to let go
// of a database it is writing.
const handoffWait = 5 * time.Second

// Handoff writes h as a new session in the program's database
// (opencode.db, or Kilo's kilo.db, in its data directory: see Roots),
// which `opencode --session ID` (`kilo --session ID`) in h.Dir resumes,
// and `opencode run --session ID PROMPT` continues without a terminal:
// a row of its session table (h.Dir as its directory, the loom session
// in its metadata column's loomHandoff, which the program keeps), and
// rows of its message and part tables, in the order the program takes
// them (by time, then id; see idMaker), before anything it adds. A prompt is a user message of a
// text part, naming no model (the program resumes with the one the user
// has configured); a reply is an assistant message of reasoning, text
// and tool parts (each call completed with its output, or failed with
// its error), a new message where the model wrote on after the results
// of its calls. Shell commands become bash calls and file reads read
// calls, and a session imported from the program keeps its calls as
// they were; any other tool call is told as text.
//
// The program makes its database when it first runs, with a schema of
// its version: a handoff needs one there already, and refuses a schema
// whose tables lack a column it writes or require one it does not. The
// session goes in one transaction, waiting up to 5 seconds for a
// program that is writing the database. Its project is the program's
// for h.Dir when the program has recorded one (the id it caches in the
// repository's .git/opencode), else "global", from which the program
// moves it to the repository's project when it next opens h.Dir.
func (f Format) Handoff(ctx context.Context, h *handoff.Handoff) (*handoff.Handed, error) {
	a := f.a()
	roots := f.Roots(h.Env, h.Home)
	if len(roots) == 0 {
		return nil, fmt.Errorf("%s: no home directory to write to", a.tool)
	}
	path := filepath.Join(roots[0], a.db)
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, loom.Errorf(loom.EINVALID, "%s: no %s to write to (%s makes it when it first runs: run %s once)", a.tool, path, a.tool, a.tool)
	}
	// The program's ids and times go by its clock, not by the
	// handoff's own time (h.Time): what it adds must come after.
	now := time.Now()
	ids := &idMaker{last: now.UnixMilli()}
	sid, err := ids.session(now)
	if err != nil {
		return nil, err
	}
	sid = h.SessionID(func() string { return sid })
	out := &handoff.Handed{Tool: a.tool, SessionID: sid, Path: path,
		Resume: handoff.ResumeIn(h.Dir, a.tool, "--session", sid)}
	w := &ocWriter{h: h, a: a, out: out, ids: ids, sid: sid, now: now.UnixMilli()}
	if err := w.convert(); err != nil {
		return nil, err
	}
	if err := w.write(ctx, path, now); err != nil {
		return nil, err
	}
	return out, nil
}

// ocRow is a row of the message table, or of the part table (a part
// names its message).
type ocRow struct {
	id, message string
	at          int64
	data        map[string]any
}

// ocWriter turns a handoff into the rows of one session.
type ocWriter struct {
	h        *handoff.Handoff
	a        *app
	out      *handoff.Handed
	ids      *idMaker
	sid      string
	now      int64 // the time of the handoff by the program's clock, ms
	messages []ocRow
	parts    []ocRow
	// title is the session's, else its first prompt's first line.
	title string
}

// convert makes the message and part rows of h.
func (w *ocWriter) convert() error {
	h := w.h
	tools := handoff.Tools{Target: w.a.tool, Shell: "bash", Read: "read", ReadKey: "filePath"}
	isCall := h.IsCall(tools)
	calls := handoff.CallIDs{Prefix: "call_loom"}
	w.title = h.Session.Title
	parent := ""
	last := int64(0)
	for _, e := range handoff.Entries(h, w.out) {
		// In order, and never after now: the program orders messages
		// by their time (and id), and what it adds must come after.
		at := max(last, min(e.At.UnixMilli(), w.now))
		last = at
		if e.Role == loom.RoleUser {
			if w.title == "" {
				w.title, _, _ = strings.Cut(strings.TrimSpace(e.Text()), "\n")
				w.title = importer.Clip(w.title, 100)
			}
			id, err := w.message(at, map[string]any{"role": "user", "time": map[string]any{"created": at}, "agent": w.a.agent})
			if err != nil {
				return err
			}
			parent = id
			if err := w.part(id, at, map[string]any{"type": "text", "text": e.Text()}); err != nil {
				return err
			}
			continue
		}
		for _, step := range e.Steps(isCall) {
			finish := "stop"
			if slices.ContainsFunc(step, isCall) {
				finish = "tool-calls"
			}
			model := e.Model
			if model == "" {
				model = "unknown"
			}
			id, err := w.message(at, map[string]any{"parentID": parent, "role": "assistant", "mode": w.a.agent, "agent": w.a.agent,
				"path": map[string]any{"cwd": h.Dir, "root": h.Dir}, "cost": 0,
				"tokens":  map[string]any{"input": 0, "output": 0, "reasoning": 0, "cache": map[string]any{"read": 0, "write": 0}},
				"modelID": model, "providerID": "loom", "time": map[string]any{"created": at, "completed": at}, "finish": finish})
			if err != nil {
				return err
			}
			for _, p := range step {
				var data map[string]any
				switch {
				case p.Type == loom.PartReasoning:
					data = map[string]any{"type": "reasoning", "text": p.Text, "time": map[string]any{"start": at, "end": at}}
				case p.Type == loom.PartText:
					data = map[string]any{"type": "text", "text": p.Text, "time": map[string]any{"start": at, "end": at}}
				case isCall(p):
					w.out.ToolCalls++
					name, args := h.Call(p, tools)
					data = map[string]any{"type": "tool", "tool": name, "callID": calls.For(p), "state": finishedState(p, args, at, h.FromTool(w.a.tool))}
				default:
					w.out.ToolRecords++
					data = map[string]any{"type": "text", "text": handoff.ToolRecord(p), "time": map[string]any{"start": at, "end": at}}
				}
				if err := w.part(id, at, data); err != nil {
					return err
				}
			}
		}
	}
	if w.title == "" {
		w.title = "Handed-off session"
	}
	return nil
}

// finishedState is the state of a finished call p, with its arguments args:
// completed with its output, or error with its error. A call of the
// program's own keeps its title and metadata.
func finishedState(p loom.Part, args any, at int64, own bool) map[string]any {
	times := map[string]any{"start": at, "end": at}
	if p.Status == loom.ToolError {
		return map[string]any{"status": "error", "input": args, "error": handoff.ResultText(p), "time": times}
	}
	title, meta := p.Title, any(map[string]any{})
	if own && len(p.Metadata) > 0 && p.Metadata[0] == '{' {
		meta = p.Metadata
	}
	if title == "" {
		if cmd, ok := shell.Command(p); ok {
			title = cmd
		} else if path, ok := handoff.ReadPath(p); ok {
			title = path
		}
	}
	return map[string]any{"status": "completed", "input": args, "output": handoff.ResultText(p), "title": importer.Clip(title, 200),
		"metadata": meta, "time": times}
}

// message adds a message row of data at time at (milliseconds) and
// returns its id.
func (w *ocWriter) message(at int64, data map[string]any) (string, error) {
	id, err := w.ids.next("msg_")
	if err != nil {
		return "", err
	}
	w.messages = append(w.messages, ocRow{id: id, at: at, data: data})
	return id, nil
}

// part adds a part row of message.
func (w *ocWriter) part(message string, at int64, data map[string]any) error {
	id, err := w.ids.next("prt_")
	if err != nil {
		return err
	}
	w.parts = append(w.parts, ocRow{id: id, message: message, at: at, data: data})
	return nil
}

// The columns a handoff writes, by table.
var handoffColumns = map[string][]string{
	"project": {"id", "worktree", "time_created", "time_updated", "sandboxes"},
	"session": {"id", "project_id", "slug", "directory", "path", "title", "version", "metadata", "time_created", "time_updated"},
	"message": {"id", "session_id", "time_created", "time_updated", "data"},
	"part":    {"id", "message_id", "session_id", "time_created", "time_updated", "data"},
}

// write adds the session and its rows to the database at path, in one
// transaction.
func (w *ocWriter) write(ctx context.Context, path string, now time.Time) error {
	tool := w.a.tool
	ctx, cancel := context.WithTimeout(ctx, handoffWait+time.Second)
	defer cancel()
	db, err := sql.Open(driverName, "file:"+(&url.URL{Path: path}).EscapedPath()+fmt.Sprintf("?_pragma=busy_timeout(%d)&_txlock=immediate", handoffWait.Milliseconds()))
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return writeError(tool, path, err)
	}
	defer tx.Rollback()
	for table, cols := range handoffColumns {
		if err := checkColumns(ctx, tx, tool, path, table, cols); err != nil {
			return err
		}
	}
	project, worktree := "global", "/"
	if id := cachedProject(w.h.Dir); id != "" {
		var wt string
		if tx.QueryRowContext(ctx, "SELECT worktree FROM project WHERE id = ?", id).Scan(&wt) == nil && wt != "" {
			project, worktree = id, wt
		}
	}
	ms := now.UnixMilli()
	if project == "global" {
		if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', ?, ?, '[]')", ms, ms); err != nil {
			return writeError(tool, path, err)
		}
	}
	rel, err := filepath.Rel(worktree, w.h.Dir)
	if err != nil || rel == "." {
		rel = ""
	}
	// The program's version, as the rows it wrote last name it.
	version := "0.0.0"
	_ = tx.QueryRowContext(ctx, "SELECT version FROM session ORDER BY time_updated DESC LIMIT 1").Scan(&version)
	meta, _ := json.Marshal(map[string]any{handoff.OriginField: w.h.Origin()})
	if _, err := tx.ExecContext(ctx, "INSERT INTO session (id, project_id, slug, directory, path, title, version, metadata, time_created, time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		w.sid, project, "loom-"+strings.ToLower(w.sid[len(w.sid)-8:]), w.h.Dir, filepath.ToSlash(rel), w.title, version, string(meta), ms, ms); err != nil {
		return writeError(tool, path, err)
	}
	for _, r := range slices.Concat(w.messages, w.parts) {
		data, err := rowJSON(r.data)
		if err != nil {
			return fmt.Errorf("%s: %w", tool, err)
		}
		if r.message == "" {
			_, err = tx.ExecContext(ctx, "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
				r.id, w.sid, r.at, r.at, data)
		} else {
			_, err = tx.ExecContext(ctx, "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
				r.id, r.message, w.sid, r.at, r.at, data)
		}
		if err != nil {
			return writeError(tool, path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return writeError(tool, path, err)
	}
	return nil
}

// rowJSON is v as a data column holds it: JSON, <, > and & as they are.
func rowJSON(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// writeError is err, met writing the database at path, as one line.
func writeError(tool, path string, err error) error {
	if importer.SQLiteBusy(err) {
		return fmt.Errorf("%s: %s is being written; try again", tool, path)
	}
	return fmt.Errorf("%s: writing %s: %w", tool, path, err)
}

// checkColumns checks that table has the columns a handoff writes (cols)
// and requires no other (NOT NULL without a default).
func checkColumns(ctx context.Context, tx *sql.Tx, tool, path, table string, cols []string) error {
	rows, err := tx.QueryContext(ctx, "SELECT name, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", table)
	if err != nil {
		return writeError(tool, path, err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var name string
		var notNull, pk int
		var dflt sql.NullString
		if err := rows.Scan(&name, &notNull, &dflt, &pk); err != nil {
			return writeError(tool, path, err)
		}
		have[name] = true
		if notNull == 1 && !dflt.Valid && pk == 0 && !slices.Contains(cols, name) {
			return fmt.Errorf("%s: %s is of a schema this loom does not know (its %s table requires %s)", tool, path, table, name)
		}
	}
	if err := rows.Err(); err != nil {
		return writeError(tool, path, err)
	}
	for _, c := range cols {
		if !have[c] {
			return fmt.Errorf("%s: %s is of a schema this loom does not know (its %s table has no %s column)", tool, path, table, c)
		}
	}
	return nil
}

// cachedProject is the project id the program cached for the git
// repository h.Dir is in (.git/opencode), "" when there is none.
func cachedProject(dir string) string {
	for d := dir; ; {
		git := filepath.Join(d, ".git")
		if fi, err := os.Stat(git); err == nil {
			if !fi.IsDir() {
				return ""
			}
			f, _, err := importer.Open(filepath.Join(git, "opencode"), 256)
			if err != nil {
				return ""
			}
			defer f.Close()
			var b [256]byte
			n, _ := f.Read(b[:])
			return strings.TrimSpace(string(b[:n]))
		}
		up := filepath.Dir(d)
		if up == d {
			return ""
		}
		d = up
	}
}

// idMaker makes ids of the program's form: a prefix, twelve hex digits
// of the time in milliseconds times 4096 plus a count (which keeps ids
// made in one millisecond apart; the program keeps the last 48 bits,
// so that ids wrap every two years or so), then fourteen letters and
// digits. A session's id counts down, so that the newest sorts first.
// The ids of a handoff's messages and parts are all made from the
// time of the handoff, in order, whatever the times of the messages:
// made from those, ids of messages of a session older than the last
// wrap would sort after the program's new ones.
type idMaker struct {
	last, n int64
}

const idLetters = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// next is a new id of prefix, after every id made before.
func (m *idMaker) next(prefix string) (string, error) {
	m.n++
	if m.n >= 0x1000 {
		m.last, m.n = m.last+1, 1
	}
	return idOf(prefix, uint64(m.last*0x1000+m.n))
}

// session is a new session id at now.
func (m *idMaker) session(now time.Time) (string, error) {
	return idOf("ses_", ^uint64(now.UnixMilli()*0x1000+1))
}

func idOf(prefix string, v uint64) (string, error) {
	b := make([]byte, 14)
	if _, err := rand.Read(b); err != nil {
		return "", errors.New("opencode: no random source: " + err.Error())
	}
	for i := range b {
		b[i] = idLetters[int(b[i])%len(idLetters)]
	}
	return fmt.Sprintf("%s%012x%s", prefix, v&0xffffffffffff, b), nil
}
