package session_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/clitest"
)

// The ids loom prints on a terminal are the shortest prefix, 8 or more
// characters, that is unique among all of the user's sessions, not only
// among the rows shown: in session list -L 3, usage -L 3, search, and
// what fork, move and delete say of the session they changed, an id
// typed back as printed finds its session.
func TestShortIDsResolveBack(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenStore(t)
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	// Hidden sessions (older, cheaper, without the searched word) share
	// each shown one's first ten characters.
	sessions := []struct{ id, word string }{
		{"01a20e5e-1119-7111-8111-111111111111", "hidden"},
		{"01a20e5e-2229-7222-8222-222222222222", "hidden"},
		{"01a20e5e-1111-7111-8111-111111111111", "zebra"},
		{"01a20e5e-2222-7222-8222-222222222222", "shown"},
		{"01a20e5e-3333-7333-8333-333333333333", "shown"},
	}
	for i, s := range sessions {
		cost := 0.01
		if s.word != "hidden" {
			cost = 1
		}
		when := at.Add(time.Duration(i) * time.Minute)
		reply := clitest.TextMsg(loom.RoleAssistant, "the "+s.word+" answer", when.Add(time.Second))
		reply.Model, reply.Provider = "gpt-4o-mini", "openai"
		reply.Usage = loom.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: cost}
		if err := st.Append(context.Background(), &loom.Session{ID: s.id, UserID: "local", Key: "cli:" + s.id, Project: fx.Proj, Title: "session " + s.id[9:13]},
			clitest.TextMsg(loom.RoleUser, "the "+s.word+" question", when), reply); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	printed := regexp.MustCompile(`01a20e5e[0-9a-f-]*`)
	zebra := sessions[2].id
	for _, args := range [][]string{{"session", "list", "-L", "3"}, {"usage", "-L", "3"}, {"search", "zebra"},
		{"session", "fork", zebra, "--turn", "1"}, {"session", "move", zebra, fx.Other}, {"session", "delete", zebra, "--yes"}} {
		p := fx.StartPTYSize(t, 100, 40, args...)
		if code := p.Wait(t); code != 0 {
			t.Fatalf("loom %s: exit %d:\n%s", strings.Join(args, " "), code, p.Output())
		}
		// An id as printed: not the start of a key cut to fit the
		// table ("cli:01a20e5e-2…2222222222" is a key, its id cut).
		var ids []string
		out := p.Output()
		for _, at := range printed.FindAllStringIndex(out, -1) {
			if at[0] > 0 && out[at[0]-1] == ':' && strings.HasPrefix(out[at[1]:], "…") {
				continue
			}
			ids = append(ids, out[at[0]:at[1]])
		}
		if len(ids) == 0 {
			t.Fatalf("loom %s prints no id:\n%s", strings.Join(args, " "), p.Output())
		}
		for _, id := range ids {
			if args[1] == "delete" {
				// The session is in the trash now: its id as printed is
				// the prefix of it alone among every session, live or not.
				all := fx.MustExec(t, "session", "list", "-a", "--json") + fx.MustExec(t, "session", "list", "--deleted", "-a", "--json")
				if n := strings.Count(all, `"id": "`+id); n != 1 {
					t.Errorf("loom %s printed %s, the prefix of %d sessions:\n%s", strings.Join(args, " "), id, n, p.Output())
				}
				continue
			}
			r := fx.Exec(t, "", "session", "show", id, "--json")
			if r.Code != 0 || !strings.Contains(r.Stdout, `"id": "`+id) {
				t.Errorf("loom %s printed %s, which does not find its session (exit %d): %s\n%s", strings.Join(args, " "), id, r.Code, r.Stderr, p.Output())
			}
		}
	}
}
