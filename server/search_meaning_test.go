package server_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/embedding/embeddingtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/semantic"
	"github.com/loomhq/loom/server"
)

// GET /api/v1/search ranks by meaning with semantic=true where the
// server has an embeddings model, refuses it where it has none, and
// refuses semantic and keyword together.
func TestSearchAPIByMeaning(t *testing.T) {
	srv := embeddingtest.New()
	defer srv.Close()
	client := embedding.New(srv.URL+"/v1", "test-embed", "")
	var searcher *semantic.Searcher
	e := newEnv(t, func(c *server.Config) {
		searcher = &semantic.Searcher{Store: c.Store, Client: client}
		c.Searcher = searcher
	})
	storetest.AppendTexts(t, e.st, &loom.Session{UserID: "alice", Key: "api:registry"},
		"the registry keeps which sessions are still running", "deploy with rsync")
	if _, err := (&semantic.Embedder{Store: e.st, Client: client, OnStored: searcher.Add}).Run(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	var r struct{ Hits []loom.SearchHit }
	e.getJSON("/api/v1/search?q=which+chats+are+running&semantic=true", e.alice, &r)
	if len(r.Hits) == 0 || r.Hits[0].Tier != loom.TierMeaning || !strings.Contains(r.Hits[0].Snippet, "running") {
		t.Fatalf("semantic=true: %+v", r.Hits)
	}
	e.getJSON("/api/v1/search?q=which+chats+are+running&semantic=true", e.bob, &r)
	if len(r.Hits) != 0 {
		t.Fatalf("bob found alice's messages by meaning: %+v", r.Hits)
	}
	resp, b := e.request("GET", "/api/v1/search?q=x&semantic=true&keyword=true", e.alice, nil)
	wantError(t, "semantic and keyword", resp, b, 400, "invalid")

	plain := newEnv(t)
	resp, b = plain.request("GET", "/api/v1/search?q=x&semantic=true", plain.alice, nil)
	wantError(t, "semantic without a model", resp, b, 400, "invalid")
}
