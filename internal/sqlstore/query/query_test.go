package query

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

var numbered = Dialect{
	Param: func(n int) string { return "$" + strconv.Itoa(n) },
	Time:  func(t time.Time) any { return t },
	Before: func(c *loom.Cursor) (string, []any) {
		return "(s.updated_at, s.id) < (?, ?)", []any{c.UpdatedAt, c.ID}
	},
	TitleIs: "lower(s.title) = lower(?)",
	Join:    "JOIN",
	Match: func(text string) (Match, bool) {
		return Match{From: "bodies b JOIN messages m ON m.body_id = b.id", Cond: "b.search @@ to_tsquery(?)", Args: []any{text}, Newest: "b.id DESC"}, text != ""
	},
}

func TestClauseNumbersArguments(t *testing.T) {
	c := New(numbered)
	head := c.SQL("SELECT ? AS q", "x")
	c.Add("a = ?", 1)
	c.Add("b IN (?, ?)", 2, 3)
	if head != "SELECT $1 AS q" || c.String() != "a = $2 AND b IN ($3, $4)" || len(c.Args) != 4 {
		t.Fatalf("head %q, clause %q, args %v", head, c.String(), c.Args)
	}
	if New(numbered).String() != "TRUE" {
		t.Fatal("an empty clause is not TRUE")
	}
}

func TestSessionsText(t *testing.T) {
	q, args := Sessions(numbered, loom.SessionFilter{UserID: "u", Text: `50%_off\x`, Limit: 5})
	for _, want := range []string{"s.user_id = $1", "s.deleted_at IS NULL", `lower(s.title) LIKE lower($2) ESCAPE '\'`,
		"(s.id >= $6 AND s.id < $7)", "JOIN sessions ms ON ms.id = m.session_id", "ms.user_id = $9", "LIMIT 2000)", "LIMIT 5"} {
		if !strings.Contains(q, want) {
			t.Errorf("query lacks %q:\n%s", want, q)
		}
	}
	if args[1] != `%50\%\_off\\x%` || args[5] != `50%_off\x` || args[7] != `50%_off\x` || args[8] != "u" || len(args) != 9 {
		t.Fatalf("args = %q", args)
	}
	// Short text: no id prefix.
	if q, _ := Sessions(numbered, loom.SessionFilter{Text: "abc"}); strings.Contains(q, "s.id >=") {
		t.Fatalf("a 3-character prefix: %s", q)
	}
}
