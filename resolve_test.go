package loom

import (
	"strings"
	"testing"
)

func TestResolveWithOrder(t *testing.T) {
	a := &Session{ID: "01a1ffe9-0000-7000-8000-000000000001", Key: "cli:api", Title: "Plan", Project: Project{ID: "p1"}}
	b := &Session{ID: "01a1ffe9-0000-7000-8000-000000000002", Key: "cli:api", Title: "plan", Project: Project{ID: "p2"}}
	all := []*Session{a, b}
	find := func(by Lookup, v string) ([]*Session, error) {
		var out []*Session
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
		got, err := ResolveWith(tc.ref, tc.scope, find)
		if ErrorCode(err) != tc.code || got != tc.want {
			t.Errorf("ResolveWith(%q) = %v, %v; want %v, code %q", tc.ref, got, err, tc.want, tc.code)
		}
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
