package conformance

import (
	"fmt"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// testSearchNamedSession: a question that names whom it is about ("What
// is Nate's favorite genre of movies?") finds, across projects, the
// message of the conversation that names Nate, though the message does
// not say his name and another conversation's says the question's other
// words in fewer words (sqlstore.Names). Written as a lower-case word,
// "nate" is no name: that other conversation's message comes first,
// which shows the message alone ranks lower.
func testSearchNamedSession(t *testing.T, open Opener) {
	st := open(t)
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	nate := newSession("alice", "cli:films-nate")
	nate.Project = loom.Project{ID: "1111222233334444", Name: "tournament", Root: "/src/tournament"}
	nate.Cwd = nate.Project.Root
	kevin := newSession("alice", "cli:films-kevin")
	kevin.Project = loom.Project{ID: "5555666677778888", Name: "weekend", Root: "/src/weekend"}
	kevin.Cwd = kevin.Project.Root
	filler := newSession("alice", "cli:films-other")
	var notes []string
	for i := 1; i <= 40; i++ {
		notes = append(notes, fmt.Sprintf("Carol: the deploy of build %d went through after the cache was cleared.", i))
	}
	data := []*loom.SessionData{
		sessionOf(nate, t0, []string{
			"Nate: Hey Joanna, a long week at the tournament, I am glad it is over.",
			"Joanna: Good to hear from you, Nate! What do you watch when you rest?",
			"Sci-fi movies: that genre is my favorite.",
		}),
		sessionOf(kevin, t0.Add(time.Hour), []string{"My favorite genre of movies: horror."}),
		sessionOf(filler, t0.Add(2*time.Hour), notes),
	}
	if err := st.Import(ctx(t), data); err != nil {
		t.Fatal(err)
	}
	first := func(text string) loom.SearchHit {
		t.Helper()
		hits, err := searchAgain(ctx(t), st, loom.SearchQuery{Text: text, UserID: "alice", Limit: 3})
		if err != nil || len(hits) == 0 {
			t.Fatalf("search %q = %+v, %v", text, hits, err)
		}
		for _, h := range hits {
			t.Logf("%q: %s %d %.3f %s", text, h.SessionKey, h.Seq, h.Score, h.Tier)
		}
		return hits[0]
	}
	if h := first("What is Nate's favorite genre of movies?"); h.SessionID != nate.ID || h.Seq != 3 {
		t.Errorf("first hit %s %d, want the message of the conversation that names Nate (%s 3)", h.SessionKey, h.Seq, nate.Key)
	}
	if h := first("what is nate's favorite genre of movies?"); h.SessionID != kevin.ID {
		t.Errorf("no name in the question: first hit %s %d, want the message that says its words in fewer (%s 1)", h.SessionKey, h.Seq, kevin.Key)
	}
}
