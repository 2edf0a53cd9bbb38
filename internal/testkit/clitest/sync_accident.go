package clitest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// OnBothHubs runs run as subtests "hub on SQLite" and "hub on
// PostgreSQL", with hubDB making a new hub store on that engine for
// startHub each time it is called.
func OnBothHubs(t *testing.T, run func(t *testing.T, hubDB func(*testing.T) string)) {
	for _, hubOn := range []string{"SQLite", "PostgreSQL"} {
		t.Run("hub on "+hubOn, func(t *testing.T) {
			run(t, func(t *testing.T) string {
				if hubOn == "PostgreSQL" {
					return FreshSchema(t)
				}
				return ""
			})
		})
	}
}

// Say appends turns to a session keyed by title in fx's store, as the
// agent would, and returns the session.
func Say(t *testing.T, fx *Fixture, title string, turns int) *loom.Session {
	t.Helper()
	ctx := context.Background()
	st := fx.OpenEngine(t)
	defer st.Close()
	s := &loom.Session{UserID: "local", Key: "cli:" + strings.ReplaceAll(title, " ", "-"), Title: title}
	if got, err := st.Resolve(ctx, s.Key, loom.ResolveScope{UserID: "local"}); err == nil {
		s = got
	}
	for i := range turns {
		for _, role := range []string{loom.RoleUser, loom.RoleAssistant} {
			m := &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprintf("wombat %s %d of %s", role, i, title)}}}
			if err := st.Append(ctx, s, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

// Titles returns the sorted titles of every session fx lists, failing
// when any is there twice.
func Titles(t *testing.T, fx *Fixture) []string {
	t.Helper()
	var out []string
	for _, s := range DecodeJSON[[]loom.Session](t, fx.MustExec(t, "session", "list", "-a", "-L", "0", "--json")) {
		out = append(out, s.Title)
	}
	slices.Sort(out)
	if len(slices.Compact(slices.Clone(out))) != len(out) {
		t.Fatalf("a session is there twice: %q", out)
	}
	return out
}
