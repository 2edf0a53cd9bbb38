package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding/embeddingtest"
	"github.com/loomhq/loom/internal/storetest"
)

// loom embed embeds every message once, loom search then ranks by
// meaning too, and --semantic finds a message by other words than its
// own.
func TestSearchByMeaning(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	st, err := openEngine(context.Background(), fx.db)
	if err != nil {
		t.Fatal(err)
	}
	storetest.AppendTexts(t, st, &loom.Session{UserID: "local", Key: "cli:registry", Title: "registry"},
		"add an ActiveSessionRegistry", "the registry keeps which sessions are still running",
		"deploy the site with rsync", "done: rsync over ssh")
	st.Close()
	srv := embeddingtest.New()
	defer srv.Close()
	env := runOpts{env: map[string]string{"LOOM_EMBEDDINGS_URL": srv.URL + "/v1", "LOOM_EMBEDDINGS_MODEL": "test-embed"}}

	if r := fx.runWith(t, env, "embed"); r.code != 0 || !strings.Contains(r.stderr, "embedded 4 messages with test-embed") {
		t.Fatalf("embed: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	if r := fx.runWith(t, env, "embed"); r.code != 0 || !strings.Contains(r.stderr, "embedded 0 messages") {
		t.Fatalf("embed again: exit %d, %s", r.code, r.stderr)
	}
	if n := len(srv.Counts()); n != 4 || srv.Calls() != 1 {
		t.Fatalf("the server embedded %d texts in %d calls, want 4 in 1", n, srv.Calls())
	}
	r := fx.runWith(t, env, "embed", "--status", "--json")
	status := decodeJSON[loom.VectorStatus](t, r.stdout)
	if status.Vectors != 4 || status.Pending != 0 || status.Model != "test-embed" {
		t.Fatalf("status %+v", status)
	}

	r = fx.runWith(t, env, "search", "-a", "which chats are still running", "--semantic", "--json")
	hits := decodeJSON[[]loom.SearchHit](t, r.stdout)
	if r.code != 0 || len(hits) == 0 || !strings.Contains(strings.ReplaceAll(hits[0].Snippet, "**", ""), "still running") || hits[0].Tier != loom.TierMeaning {
		t.Fatalf("--semantic: exit %d, %+v %s", r.code, hits, r.stderr)
	}
	r = fx.runWith(t, env, "search", "-a", "rsync", "--json")
	hits = decodeJSON[[]loom.SearchHit](t, r.stdout)
	if r.code != 0 || len(hits) < 2 || !strings.Contains(hits[0].Snippet, "rsync") {
		t.Fatalf("fused: exit %d, %+v %s", r.code, hits, r.stderr)
	}
	if r := fx.runWith(t, env, "search", "x", "--semantic", "--keyword"); r.code != ExitUsage {
		t.Fatalf("--semantic --keyword: exit %d", r.code)
	}
	// Without an endpoint: keywords only, --semantic refused in one line.
	r = fx.run(t, "search", "-a", "which chats", "--semantic")
	if r.code == 0 || !strings.Contains(r.stderr, "needs an embeddings endpoint") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("--semantic without an endpoint: exit %d, %q", r.code, r.stderr)
	}
}

// Without an embeddings endpoint loom says once, on a terminal, that
// search ranks by keywords only.
func TestSearchSaysOnceKeywordsOnly(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	say(t, fx, "registry", 1)
	tty := runOpts{tty: true}
	first := fx.runWith(t, tty, "search", "-a", "wombat")
	if first.code != 0 || strings.Count(first.stderr, "search ranks by keywords only") != 1 {
		t.Fatalf("first search: exit %d, %q", first.code, first.stderr)
	}
	if again := fx.runWith(t, tty, "search", "-a", "wombat"); strings.Contains(again.stderr, "keywords only") {
		t.Fatalf("said again: %q", again.stderr)
	}
}

// loom mcp's search_sessions ranks by meaning with semantic: true where
// an embeddings model is configured, and refuses semantic with keyword.
func TestMCPSearchByMeaning(t *testing.T) {
	t.Parallel()
	fx := newEmptyFixture(t)
	st, err := openEngine(context.Background(), fx.db)
	if err != nil {
		t.Fatal(err)
	}
	storetest.AppendTexts(t, st, &loom.Session{UserID: "local", Key: "cli:registry", Project: fx.proj, Cwd: fx.project},
		"add an ActiveSessionRegistry", "the registry keeps which sessions are still running")
	st.Close()
	srv := embeddingtest.New()
	defer srv.Close()
	env := map[string]string{"LOOM_EMBEDDINGS_URL": srv.URL + "/v1", "LOOM_EMBEDDINGS_MODEL": "test-embed"}
	if r := fx.runWith(t, runOpts{env: env}, "embed"); r.code != 0 {
		t.Fatalf("embed: exit %d, %s", r.code, r.stderr)
	}
	cs := connectStdio(t, fx, "LOOM_EMBEDDINGS_URL="+env["LOOM_EMBEDDINGS_URL"], "LOOM_EMBEDDINGS_MODEL=test-embed")
	c := mustCall(t, cs, "search_sessions", map[string]any{"query": "which chats are still running", "semantic": true})
	if !strings.Contains(c.text, "still") || !strings.Contains(mustJSON(t, c.data), `"tier":"meaning"`) {
		t.Fatalf("semantic: %s", c.text)
	}
	wantToolError(t, cs, "search_sessions", map[string]any{"query": "x", "semantic": true, "keyword": true}, "cannot be used together")
}
