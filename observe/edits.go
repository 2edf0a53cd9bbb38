package observe

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/internal/shell"
	"github.com/loomhq/loom/internal/sqlstore"
)

// Session is what the edits of a record name of its session: its id in
// the store, and the model it ran with; ok is false when the store
// holds no session of that key (not imported yet).
type Session func(ctx context.Context, key string) (id, model string, ok bool)

// SessionLister lists a store's sessions.
type SessionLister interface {
	Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error)
}

// ByKey is the Session of st's sessions of user: the session an import
// of the agent's session made, by its key.
func ByKey(st SessionLister, user string) Session {
	return func(ctx context.Context, key string) (string, string, bool) {
		ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Key: key, Limit: 1})
		if err != nil || len(ss) == 0 {
			return "", "", false
		}
		return ss[0].ID, ss[0].Model, true
	}
}

// Edits is an edit store whose edits are the store's and, for every
// call the records saw, the changes the records hold, as edits of a
// tool that replaced each file's changed lines (Edit): the store's edits
// read from those calls' command lines give way to them.
type Edits struct {
	loom.EditStore
	Records []Record
	// Log, when set, gives the records of the work trees each query
	// reaches besides Records: a blame reads its repository's alone.
	Log     *Log
	Session Session

	resolved map[string]resolved
}

type resolved struct {
	id, model string
	ok        bool
}

func (o *Edits) session(ctx context.Context, key string) resolved {
	if r, ok := o.resolved[key]; ok {
		return r
	}
	if o.resolved == nil {
		o.resolved = map[string]resolved{}
	}
	var r resolved
	r.id, r.model, r.ok = o.Session(ctx, key)
	o.resolved[key] = r
	return r
}

// Edits are the store's edits q selects and the records' (oldest first).
func (o *Edits) Edits(ctx context.Context, q loom.EditQuery) ([]loom.FileEdit, error) {
	es, err := o.EditStore.Edits(ctx, q)
	if err != nil {
		return es, err
	}
	recs := o.Records
	if o.Log != nil {
		recs = append(slices.Clone(recs), o.Log.Of(q)...)
	}
	if len(recs) == 0 {
		return es, nil
	}
	seen := map[string]map[string]bool{} // session → calls observed
	var own []loom.FileEdit
	for _, r := range recs {
		s := o.session(ctx, r.Key)
		if !s.ok || q.SessionID != "" && q.SessionID != s.id {
			continue
		}
		if seen[s.id] == nil {
			seen[s.id] = map[string]bool{}
		}
		seen[s.id][r.Call] = true
		if strings.HasPrefix(r.Call, "input:") && r.Command != "" {
			// An agent that names no call (Gemini CLI): the call of the
			// session that ran the same command.
			seen[s.id]["command:"+r.Command] = true
		}
		own = append(own, r.edits(q, s)...)
	}
	if q.Parts {
		es = slices.DeleteFunc(es, func(e loom.FileEdit) bool {
			calls := seen[e.SessionID]
			if calls == nil {
				return false
			}
			id, cmd := callOf(&e)
			return calls[id] || cmd != "" && calls["command:"+cmd]
		})
	}
	es = append(es, own...)
	slices.SortStableFunc(es, func(a, b loom.FileEdit) int { return a.At.Compare(b.At) })
	return es, nil
}

// callOf is the agent's id of the tool call edit e was read from, and
// its shell command when it ran one.
func callOf(e *loom.FileEdit) (id, command string) {
	ps, err := sqlstore.DecodeParts(e.Parts)
	if err != nil {
		return "", ""
	}
	for _, p := range ps {
		if p.ID == e.PartID {
			cmd, _ := shell.Command(p)
			return p.CallID, cmd
		}
	}
	return "", ""
}

// edits are the edits of r that q selects, of session s.
func (r *Record) edits(q loom.EditQuery, s resolved) []loom.FileEdit {
	var parts []loom.Part
	var out []loom.FileEdit
	msg := "observed:" + r.Key + ":" + r.Call
	for _, c := range r.Files {
		if c.After == "" || c.Old == "" && c.New == "" {
			// Gone, or a file whose text is not lines.
			continue
		}
		path := filepath.Join(r.Root, filepath.FromSlash(c.Path))
		n := len(parts)
		id := "observed-" + r.Call + "-" + strconv.Itoa(n)
		var in []byte
		if c.Before == "" {
			in, _ = json.Marshal(map[string]string{"file_path": path, "content": c.New})
			parts = append(parts, loom.Part{ID: id, Type: loom.PartTool, CallID: r.Call, Name: "Write", Status: loom.ToolCompleted, Input: in})
		} else {
			in, _ = json.Marshal(map[string]string{"file_path": path, "old_string": c.Old, "new_string": c.New})
			parts = append(parts, loom.Part{ID: id, Type: loom.PartTool, CallID: r.Call, Name: "Edit", Status: loom.ToolCompleted, Input: in})
		}
		if !selects(q, path) {
			continue
		}
		op := loom.EditChange
		if c.Before == "" {
			op = loom.EditWrite
		}
		out = append(out, loom.FileEdit{SessionID: s.id, MessageID: msg, PartID: id, N: n, Tool: r.Tool, Op: op, Path: path,
			Agent: loom.SurfaceOf(r.Key), Model: s.model, At: r.At, Lines: fileedit.Hashes(c.Added())})
	}
	if q.Parts && len(out) > 0 {
		b, _ := json.Marshal(parts)
		for i := range out {
			out[i].Parts = b
		}
	}
	return out
}

// selects says whether q asks for the edits of path.
func selects(q loom.EditQuery, path string) bool {
	if len(q.Paths) > 0 {
		return slices.Contains(q.Paths, path)
	}
	under := func(dir string) bool {
		return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
	}
	if q.Under != "" || len(q.Dirs) > 0 {
		return q.Under != "" && under(q.Under) || slices.ContainsFunc(q.Dirs, under)
	}
	return q.SessionID != ""
}

// Of are the records of the work trees q reaches: those of its
// directories and its files' (every record for a query of a session).
func (l *Log) Of(q loom.EditQuery) []Record {
	if len(q.Paths) == 0 && q.Under == "" && len(q.Dirs) == 0 {
		return l.All()
	}
	var dirs []string
	if q.Under != "" {
		dirs = append(dirs, q.Under)
	}
	dirs = append(dirs, q.Dirs...)
	for _, p := range q.Paths {
		dirs = append(dirs, filepath.Dir(p))
	}
	return l.Under(dirs...)
}

// Versioned is an edit index's version with the records read beside it:
// an answer kept under it stands while neither changes.
type Versioned struct {
	loom.EditVersioner
	N int
	// Log, when set, names the records' state by its files
	// (Log.Version) instead of N.
	Log *Log
}

// EditVersion is the index's version and how many records there are
// (or the state of the log's files).
func (v Versioned) EditVersion(ctx context.Context) (string, error) {
	s, err := v.EditVersioner.EditVersion(ctx)
	if v.Log != nil {
		return s + "+observed:" + v.Log.Version(), err
	}
	return s + "+observed:" + strconv.Itoa(v.N), err
}
