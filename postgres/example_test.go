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
// SQLite (see the sqlite package's example): only the Open call differs.
// Adding search_path=NAME to the URL keeps loom's tables in a schema of
// their own (it must exist).
func Example() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, os.Getenv("LOOM_DB")) // postgres://user@host/db?search_path=loom
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:demo"}
	question := &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "Which database suits a team?"}}}
	if err := st.Append(ctx, s, question); err != nil {
		log.Fatal(err) // loom.ErrorCode(err) == loom.ELOCKED: another process writes it
	}
	hits, _ := st.Search(ctx, loom.SearchQuery{Text: "team database", UserID: "local"})
	for _, h := range hits {
		fmt.Println(h.Seq, h.Snippet)
	}
}
