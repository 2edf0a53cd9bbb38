package copilotchat

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/loomhq/loom/importer"
)

// VS Code's newer session files (.jsonl) are a log of changes to the
// session: the first line holds the whole session as it was when the
// file was begun, and each later line changes one place in it, named
// by a path of keys and indices. replay applies them in order and
// returns the session they make, as one JSON document.

// The kinds of a log line.
const (
	opInitial = 0 // v is the whole session
	opSet     = 1 // the value at k becomes v
	opPush    = 2 // the array at k is cut to i (when given), then v's items appended
	opDelete  = 3 // the value at k is removed
)

type op struct {
	Kind *int              `json:"kind"`
	K    []json.RawMessage `json:"k"`
	V    json.RawMessage   `json:"v"`
	I    *int              `json:"i"`
}

func replay(ctx context.Context, name string, r io.Reader, res *importer.Result) (json.RawMessage, error) {
	var state any
	err := importer.Lines(ctx, r, func(n int, line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var o op
		if err := json.Unmarshal(line, &o); err != nil || o.Kind == nil {
			res.Problemf(name, n, "not a change to the session")
			return nil
		}
		if *o.Kind == opInitial {
			v, err := decode(o.V)
			if err != nil {
				res.Problemf(name, n, "the initial session is not JSON")
				return nil
			}
			state = v
			return nil
		}
		if state == nil {
			res.Problemf(name, n, "a change before the initial session")
			return nil
		}
		keys, ok := keyPath(o.K)
		if !ok || len(keys) == 0 {
			res.Problemf(name, n, "a change with no place to change")
			return nil
		}
		var why string
		switch *o.Kind {
		case opSet:
			v, err := decode(o.V)
			if err != nil {
				why = "the value set is not JSON"
				break
			}
			why = set(&state, keys, v)
		case opPush:
			v, err := decode(o.V)
			items, _ := v.([]any)
			if err != nil || (items == nil && v != nil) {
				why = "the items pushed are not an array"
				break
			}
			why = push(&state, keys, items, o.I)
		case opDelete:
			why = set(&state, keys, nil)
		default:
			res.Skip("unknown-change:" + strconv.Itoa(*o.Kind))
		}
		if why != "" {
			res.Problemf(name, n, why)
		}
		return nil
	}, res.TooLong(name))
	if err != nil {
		return nil, err
	}
	if state == nil {
		return nil, nil
	}
	return json.Marshal(state)
}

func decode(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// keyPath reads a change's keys: strings name an object's members,
// numbers an array's items.
func keyPath(raw []json.RawMessage) ([]any, bool) {
	out := make([]any, 0, len(raw))
	for _, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out = append(out, s)
			continue
		}
		var i int
		if json.Unmarshal(r, &i) != nil || i < 0 {
			return nil, false
		}
		out = append(out, i)
	}
	return out, true
}

// slot is a place in the state that can be read and written.
type slot struct {
	get func() any
	put func(any)
}

// at is the place keys name below root; "" reason when there is one.
// Objects missing on the way are made.
func at(root *any, keys []any) (slot, string) {
	cur := slot{get: func() any { return *root }, put: func(v any) { *root = v }}
	for _, k := range keys {
		parent := cur.get()
		switch k := k.(type) {
		case string:
			if parent == nil {
				parent = map[string]any{}
				cur.put(parent)
			}
			m, ok := parent.(map[string]any)
			if !ok {
				return slot{}, "a member of what is not an object"
			}
			cur = slot{get: func() any { return m[k] }, put: func(v any) {
				if v == nil {
					delete(m, k)
					return
				}
				m[k] = v
			}}
		case int:
			a, ok := parent.([]any)
			if !ok || k >= len(a) {
				return slot{}, "an item past the end of an array, or of what is not one"
			}
			cur = slot{get: func() any { return a[k] }, put: func(v any) { a[k] = v }}
		}
	}
	return cur, ""
}

func set(root *any, keys []any, v any) string {
	s, why := at(root, keys)
	if why != "" {
		return why
	}
	s.put(v)
	return ""
}

func push(root *any, keys []any, items []any, from *int) string {
	s, why := at(root, keys)
	if why != "" {
		return why
	}
	cur := s.get()
	a, ok := cur.([]any)
	if cur != nil && !ok {
		return "a push to what is not an array"
	}
	if from != nil && *from >= 0 && *from < len(a) {
		a = a[:*from]
	}
	s.put(append(a, items...))
	return ""
}
