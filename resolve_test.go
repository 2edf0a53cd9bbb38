package loom

import (
	"encoding/json"
	"strings"
	"testing"
)

// Costs in JSON are rounded to a billionth of a dollar: no float noise.
func TestUsageJSONRoundsCost(t *testing.T) {
	var u Usage
	for _, c := range []float64{0.1, 0.2, 0.000000123456} {
		u.Add(Usage{CostUSD: c})
	}
	b, err := json.Marshal(u)
	if err != nil || !strings.Contains(string(b), `"cost_usd":0.300000123,`) {
		t.Fatalf("usage JSON = %s, %v", b, err)
	}
}

func TestTitleAndTruncate(t *testing.T) {
	if got := TitleFrom("  fix   the\tflaky test \nsecond line"); got != "fix the flaky test" {
		t.Fatalf("title = %q", got)
	}
	long := strings.Repeat("word ", 30)
	if got := TitleFrom(long); len([]rune(got)) > MaxTitle || !strings.HasSuffix(got, "…") || strings.HasSuffix(got, " …") {
		t.Fatalf("long title = %q", got)
	}
	if got := Truncate("héllo wörld", 6); got != "héllo…" {
		t.Fatalf("truncate = %q", got)
	}
}

func TestForkTitle(t *testing.T) {
	for _, tc := range []struct {
		parent string
		taken  []string
		want   string
	}{
		{"plan", nil, "plan (fork)"},
		{"plan", []string{"Plan (Fork)"}, "plan (fork 2)"},
		{"plan (fork)", []string{"plan (fork)", "plan (fork 2)"}, "plan (fork 3)"},
		{"plan (fork 7)", []string{"plan (fork)"}, "plan (fork 2)"},
		{"", nil, ""},
	} {
		if got := ForkTitle(tc.parent, tc.taken); got != tc.want {
			t.Errorf("ForkTitle(%q, %q) = %q, want %q", tc.parent, tc.taken, got, tc.want)
		}
	}
}

func TestResolveRefOrder(t *testing.T) {
	a := &Session{ID: "01a1ffe9-0000-7000-8000-000000000001", Key: "cli:api", Title: "Plan", Project: Project{ID: "p1"}}
	b := &Session{ID: "01a1ffe9-0000-7000-8000-000000000002", Key: "cli:api", Title: "plan", Project: Project{ID: "p2"}}
	all := []*Session{a, b}
	find := func(by RefLookup, v string) ([]*Session, error) {
		var out []*Session
		for _, s := range all {
			switch {
			case by == RefByID && s.ID == v, by == RefByPrefix && strings.HasPrefix(s.ID, v),
				by == RefByKey && s.Key == v, by == RefByTitle && strings.EqualFold(s.Title, v):
				out = append(out, s)
			}
		}
		return out, nil
	}
	for _, tc := range []struct {
		ref   string
		scope ResolveScope
		want  *Session
		code  string
	}{
		{a.ID, ResolveScope{}, a, ""},
		{strings.ToUpper(b.ID), ResolveScope{}, b, ""},
		{"01a1", ResolveScope{}, nil, EAMBIGUOUS},
		{"01a", ResolveScope{}, nil, ENOTFOUND},

		{"cli:api", ResolveScope{ProjectID: "p2"}, b, ""},
		{"cli:api", ResolveScope{}, nil, EAMBIGUOUS},
		{"PLAN", ResolveScope{}, nil, EAMBIGUOUS},
		{"  ", ResolveScope{}, nil, EINVALID},
		{"nothing", ResolveScope{}, nil, ENOTFOUND},
	} {
		got, err := ResolveRef(tc.ref, tc.scope, find)
		if ErrorCode(err) != tc.code || got != tc.want {
			t.Errorf("ResolveRef(%q) = %v, %v; want %v, code %q", tc.ref, got, err, tc.want, tc.code)
		}
	}
}

// Messages a user acts on: a prefix too short to be one says so, and an
// ambiguous reference names each candidate's title and project.
func TestResolveMessages(t *testing.T) {
	a := &Session{ID: "01a1ffe9-0000-7000-8000-000000000001", Title: "Plan", Project: Project{Name: "api"}}
	b := &Session{ID: "01a1ffe9-0000-7000-8000-000000000002", Title: "Plan", Project: Project{Name: "web"}}
	none := func(RefLookup, string) ([]*Session, error) { return nil, nil }
	if _, err := ResolveRef("01a", ResolveScope{}, none); ErrorMessage(err) != `no session matches "01a" (an id prefix needs at least 4 characters)` {
		t.Errorf("short prefix: %v", err)
	}
	if _, err := ResolveRef("01a1", ResolveScope{}, none); ErrorMessage(err) != `no session matches "01a1"` {
		t.Errorf("4-character prefix: %v", err)
	}
	both := func(by RefLookup, _ string) ([]*Session, error) {
		if by == RefByTitle {
			return []*Session{a, b}, nil
		}
		return nil, nil
	}
	_, err := ResolveRef("plan", ResolveScope{}, both)
	want := `"plan" matches 2 sessions: ` + a.ID + ` (Plan, project api); ` + b.ID + ` (Plan, project web)`
	if ErrorMessage(err) != want {
		t.Errorf("ambiguous:\n got %s\nwant %s", ErrorMessage(err), want)
	}
}
