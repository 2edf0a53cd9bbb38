package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/postgres"
)

// An agent keeps its conversations in PostgreSQL exactly as it would in
// SQLite: only the Open call differs. Adding search_path=NAME to the URL
// keeps loom's tables in a schema of their own (it must exist).
func Example() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, os.Getenv("LOOM_DB")) // postgres://user@host/db?search_path=loom
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:demo"}
	lease, err := st.Lock(ctx, s.ID)
	if err != nil {
		log.Fatal(err) // loom.ErrorCode(err) == loom.ELOCKED: another process writes it
	}
	defer lease.Release(ctx)

	say := func(role, text string) *loom.Message {
		return &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	}
	if err := st.Append(ctx, s,
		say(loom.RoleUser, "Which database does loom use?"),
		say(loom.RoleAssistant, "SQLite by default, PostgreSQL for teams."),
	); err != nil {
		log.Fatal(err)
	}
	hits, _ := st.Search(ctx, loom.SearchQuery{Text: "postgresql teams", UserID: "local"})
	for _, h := range hits {
		fmt.Println(h.Seq, h.Snippet)
	}
}
