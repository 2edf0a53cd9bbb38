package sqlstore

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

func TestResolveWithOrder(t *testing.T) {
	a := &loom.Session{ID: "01a1ffe9-0000-7000-8000-000000000001", Key: "cli:api", Title: "Plan", Project: loom.Project{ID: "p1"}}
	b := &loom.Session{ID: "01a1ffe9-0000-7000-8000-000000000002", Key: "cli:api", Title: "plan", Project: loom.Project{ID: "p2"}}
	all := []*loom.Session{a, b}
	find := func(by Lookup, v string) ([]*loom.Session, error) {
		var out []*loom.Session
		for _, s := range all {
			switch {
			case by == ByID && s.ID == v, by == ByPrefix && strings.HasPrefix(s.ID, v),
				by == ByKey && s.Key == v, by == ByTitle && strings.EqualFold(s.Title, v):
				out = append(out, s)
			}
		}
		return out, nil
	}
	for _, tc := range []struct {
		ref   string
		scope loom.ResolveScope
		want  *loom.Session
		code  string
	}{
		{a.ID, loom.ResolveScope{}, a, ""},
		{strings.ToUpper(b.ID), loom.ResolveScope{}, b, ""},
		{"01a1", loom.ResolveScope{}, nil, loom.EAMBIGUOUS},
		{"01a", loom.ResolveScope{}, nil, loom.ENOTFOUND},

		{"cli:api", loom.ResolveScope{ProjectID: "p2"}, b, ""},
		{"cli:api", loom.ResolveScope{}, nil, loom.EAMBIGUOUS},
		{"PLAN", loom.ResolveScope{}, nil, loom.EAMBIGUOUS},
		{"  ", loom.ResolveScope{}, nil, loom.EINVALID},
		{"nothing", loom.ResolveScope{}, nil, loom.ENOTFOUND},
	} {
		got, err := ResolveWith(tc.ref, tc.scope, find)
		if loom.ErrorCode(err) != tc.code || got != tc.want {
			t.Errorf("ResolveWith(%q) = %v, %v; want %v, code %q", tc.ref, got, err, tc.want, tc.code)
		}
	}
}

// Messages a user acts on: a prefix too short to be one says so, and an
// ambiguous reference names each candidate's title and project.
func TestResolveMessages(t *testing.T) {
	a := &loom.Session{ID: "01a1ffe9-0000-7000-8000-000000000001", Title: "Plan", Project: loom.Project{Name: "api"}}
	b := &loom.Session{ID: "01a1ffe9-0000-7000-8000-000000000002", Title: "Plan", Project: loom.Project{Name: "web"}}
	none := func(Lookup, string) ([]*loom.Session, error) { return nil, nil }
	if _, err := ResolveWith("01a", loom.ResolveScope{}, none); loom.ErrorMessage(err) != `no session matches "01a" (an id prefix needs at least 4 characters)` {
		t.Errorf("short prefix: %v", err)
	}
	if _, err := ResolveWith("01a1", loom.ResolveScope{}, none); loom.ErrorMessage(err) != `no session matches "01a1"` {
		t.Errorf("4-character prefix: %v", err)
	}
	both := func(by Lookup, _ string) ([]*loom.Session, error) {
		if by == ByTitle {
			return []*loom.Session{a, b}, nil
		}
		return nil, nil
	}
	_, err := ResolveWith("plan", loom.ResolveScope{}, both)
	want := `"plan" matches 2 sessions: ` + a.ID + ` (Plan, project api); ` + b.ID + ` (Plan, project web)`
	if loom.ErrorMessage(err) != want {
		t.Errorf("ambiguous:\n got %s\nwant %s", loom.ErrorMessage(err), want)
	}
}
