package sqlstore

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
)

// PackLines is the hashes of an edit's lines as both engines store them
// (edits.lines): 8 bytes each, big endian.
func PackLines(hs []uint64) []byte {
	b := make([]byte, 8*len(hs))
	for i, h := range hs {
		binary.BigEndian.PutUint64(b[8*i:], h)
	}
	return b
}

// UnpackLines reads what PackLines wrote; a trailing piece shorter than
// 8 bytes is left out.
func UnpackLines(b []byte) []uint64 {
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	return out
}

// EditFilter is the WHERE clause of an edit query over the edits e,
// messages m, spans sp and sessions se, with its arguments: list turns
// a list of strings into a subquery and its one argument, param is the
// engine's next placeholder (called once per argument, in order).
func EditFilter(q loom.EditQuery, list func(v any) (string, any), param func() string) (string, []any, error) {
	if len(q.Paths) == 0 && q.Under == "" && len(q.Dirs) == 0 && q.SessionID == "" {
		return "", nil, loom.Errorf(loom.EINVALID, "an edit query needs paths, a directory or a session")
	}
	var w []string
	var args []any
	w = append(w, "se.user_id = "+param())
	args = append(args, q.UserID)
	if !q.Trashed {
		w = append(w, "se.deleted_at IS NULL")
	}
	scope, scopeArgs := pathScope(q, list, param)
	args = append(args, scopeArgs...)
	if len(scope) > 0 {
		w = append(w, "("+strings.Join(scope, " OR ")+")")
	}
	if q.SessionID != "" {
		w = append(w, "se.id = "+param())
		args = append(args, q.SessionID)
	}
	return strings.Join(w, " AND "), args, nil
}

// BareEditFilter is the WHERE clause of a bare edit query
// (loom.EditQuery.Bare) over the edits e alone: its paths and
// directory, of every user.
func BareEditFilter(q loom.EditQuery, list func(v any) (string, any), param func() string) (string, []any) {
	scope, args := pathScope(q, list, param)
	if len(scope) == 0 {
		return "false", nil
	}
	return strings.Join(scope, " OR "), args
}

// pathScope are the conditions on the edits e of q's paths and
// directory, either of which an edit meets, with their arguments.
func pathScope(q loom.EditQuery, list func(v any) (string, any), param func() string) ([]string, []any) {
	var scope []string
	var args []any
	if len(q.Paths) > 0 {
		sub, arg := list(q.Paths)
		scope = append(scope, "e.path IN ("+sub+")")
		args = append(args, arg)
	}
	for _, d := range append([]string{q.Under}, q.Dirs...) {
		if d == "" {
			continue
		}
		dir := strings.TrimSuffix(d, "/")
		// The paths below dir sort between dir+"/" and dir+"0".
		scope = append(scope, "(e.path >= "+param()+" AND e.path < "+param()+")")
		args = append(args, dir+"/", dir+"0")
	}
	return scope, args
}

// EditRow is one edit as an edit query finds it: through one session
// that reads its message (a message that forks share is found once per
// session reading it).
type EditRow struct {
	Edit           loom.FileEdit
	SessionCreated time.Time
}

// OwnEdits keeps each edit once, in the oldest session that reads its
// message (the one it was made in: forks read their parent's), oldest
// edit first.
func OwnEdits(rows []EditRow) []loom.FileEdit {
	type key struct {
		msg, part string
		n         int
	}
	best := map[key]int{}
	for i, r := range rows {
		k := key{r.Edit.MessageID, r.Edit.PartID, r.Edit.N}
		j, ok := best[k]
		if !ok || r.SessionCreated.Before(rows[j].SessionCreated) ||
			r.SessionCreated.Equal(rows[j].SessionCreated) && r.Edit.SessionID < rows[j].Edit.SessionID {
			best[k] = i
		}
	}
	out := make([]loom.FileEdit, 0, len(best))
	for _, i := range best {
		out = append(out, rows[i].Edit)
	}
	slices.SortFunc(out, func(a, b loom.FileEdit) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.MessageID, b.MessageID), cmp.Compare(a.N, b.N))
	})
	for i := range out {
		if out[i].Agent == "" {
			out[i].Agent = "loom"
		}
	}
	return out
}
