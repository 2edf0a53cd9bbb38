package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// An agent written in Go keeps its conversations in loom's store without
// loom's command line: open a store, append (the first message creates
// the session), read the newest messages, search, fork, rename, delete
// and restore.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "loom-example")
	defer os.RemoveAll(dir)

	st, err := sqlite.Open(ctx, filepath.Join(dir, "sessions.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	// Hold the session's lock while writing it, as one process.
	s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:demo"}
	lease, err := st.Lock(ctx, s.ID)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(ctx)

	say := func(role, text string) *loom.Message {
		return &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: text}}}
	}
	if err := st.Append(ctx, s,
		say(loom.RoleUser, "Which database does loom use?"),
		say(loom.RoleAssistant, "SQLite by default, PostgreSQL for teams."),
		say(loom.RoleUser, "And how is search done?"),
		say(loom.RoleAssistant, "With an FTS5 index kept by triggers."),
	); err != nil {
		log.Fatal(err)
	}
	fmt.Println("title:", s.Title)
	fmt.Println("messages:", s.MessageCount, "turns:", s.TurnCount)

	// Newest two, in chronological order; then page back before them.
	last, _ := st.Messages(ctx, s.ID, loom.MessageQuery{Limit: 2})
	for _, m := range last {
		fmt.Printf("%d %s: %s\n", m.Seq, m.Role, m.Text())
	}
	earlier, _ := st.Messages(ctx, s.ID, loom.MessageQuery{Limit: 2, Before: last[0].Seq})
	fmt.Println("before that:", earlier[0].Seq, earlier[1].Seq)

	// Every word must appear; operators are plain text.
	hits, _ := st.Search(ctx, loom.SearchQuery{Text: "sqlite postgresql", UserID: "local"})
	fmt.Println("hit:", hits[0].Seq, hits[0].Snippet)

	// Fork at turn 1, rename it, find it by title.
	f, _ := st.Fork(ctx, s.ID, loom.ForkOptions{Turn: 1, Title: "database talk"})
	got, _ := st.Resolve(ctx, "DATABASE TALK", loom.ResolveScope{UserID: "local"})
	fmt.Println("fork:", got.ID == f.ID, f.Kind, f.ForkTurn, f.MessageCount)

	// Delete to the trash and restore.
	_, _ = st.Delete(ctx, f.ID, loom.DeleteOptions{})
	_ = st.Restore(ctx, f.ID)
	list, _ := st.Sessions(ctx, loom.SessionFilter{UserID: "local"})
	fmt.Println("sessions:", len(list))

	// Output:
	// title: Which database does loom use?
	// messages: 4 turns: 2
	// 3 user: And how is search done?
	// 4 assistant: With an FTS5 index kept by triggers.
	// before that: 1 2
	// hit: 2 **SQLite** by default, **PostgreSQL** for teams.
	// fork: true fork 1 2
	// sessions: 2
}
