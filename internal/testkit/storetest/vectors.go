package storetest

import (
	"fmt"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/embedding/embeddingtest"
	"github.com/loomhq/loom/semantic"
)

// Vectors checks an engine's keeping of vectors for search by meaning
// (loom.VectorStore), with a fake embeddings server: embedding is
// incremental and starts over for a new model; hits by meaning pass the
// search's filters; a purged session's vectors go.
func Vectors(t *testing.T, st loom.Engine) {
	vs := st.Optional().Vectors
	if vs == nil {
		t.Fatalf("%T keeps no vectors", st)
	}
	ctx := t.Context()
	srv := embeddingtest.New()
	defer srv.Close()
	run := func(model string) int {
		t.Helper()
		n, err := (&semantic.Embedder{Store: vs, Client: embedding.New(srv.URL+"/v1", model, ""), Batch: 5}).Run(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	texts := make([]string, 12)
	for i := range texts {
		texts[i] = fmt.Sprintf("message number %d about topic %d", i, i%7)
	}
	first := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:one"}
	AppendTexts(t, st, first, texts...)
	if n := run("m1"); n != 12 {
		t.Fatalf("the first run embedded %d, want 12", n)
	}
	if n := run("m1"); n != 0 {
		t.Fatalf("a run with nothing new embedded %d", n)
	}
	second := &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:two"}
	AppendTexts(t, st, second, "the registry of running sessions", "running sessions are in the registry too")
	if n := run("m1"); n != 2 {
		t.Fatalf("after two new messages a run embedded %d, want 2", n)
	}
	if n := run("test-embed"); n != 14 {
		t.Fatalf("a new model embedded %d, want all 14", n)
	}

	s := &semantic.Searcher{Store: st, Client: embedding.New(srv.URL+"/v1", "test-embed", "")}
	res, err := s.Search(ctx, loom.SearchQuery{Text: "registry", UserID: "local", SessionID: second.ID}, semantic.Meaning)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || res.Hits[0].SessionID != second.ID || res.Hits[0].Tier != loom.TierMeaning {
		t.Errorf("a search by meaning of one session: %+v, want its two messages", res.Hits)
	}
	res, err = s.Search(ctx, loom.SearchQuery{Text: "registry", UserID: "someone-else"}, semantic.Meaning)
	if err != nil || len(res.Hits) != 0 {
		t.Errorf("another user's search found %v (%v)", res.Hits, err)
	}
	res, err = s.Search(ctx, loom.SearchQuery{Text: "registry running", UserID: "local", Limit: 3}, semantic.Fused)
	if err != nil || !res.ByMeaning || len(res.Hits) != 3 {
		t.Errorf("a fused search: %+v (%v), want 3 hits ranked by meaning too", res, err)
	}

	if _, err := st.Delete(ctx, second.ID, loom.DeleteOptions{Purge: true}); err != nil {
		t.Fatal(err)
	}
	status, err := vs.VectorStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status.Vectors != 12 || status.Pending != 0 || status.Model != "test-embed" {
		t.Errorf("after purging a session of 2 messages: %+v, want 12 vectors of test-embed", status)
	}
}

// AppendTexts appends texts to s, a message each, of the user and the
// assistant in turn.
func AppendTexts(t *testing.T, st loom.Store, s *loom.Session, texts ...string) {
	t.Helper()
	var msgs []*loom.Message
	for i, text := range texts {
		role := loom.RoleUser
		if i%2 == 1 {
			role = loom.RoleAssistant
		}
		msgs = append(msgs, &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: text}}})
	}
	if err := st.Append(t.Context(), s, msgs...); err != nil {
		t.Fatal(err)
	}
}
