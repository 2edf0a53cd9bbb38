package search_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/embedding/embeddingtest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/storetest"
)

// loom embed embeds every message once, loom search then ranks by
// meaning too, and --semantic finds a message by other words than its
// own.
func TestSearchByMeaning(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenEngine(t)
	storetest.AppendTexts(t, st, &loom.Session{UserID: "local", Key: "cli:registry", Title: "registry"},
		"add an ActiveSessionRegistry", "the registry keeps which sessions are still running",
		"deploy the site with rsync", "done: rsync over ssh")
	st.Close()
	srv := embeddingtest.New()
	defer srv.Close()
	env := clitest.RunOpts{Env: map[string]string{"LOOM_EMBEDDINGS_URL": srv.URL + "/v1", "LOOM_EMBEDDINGS_MODEL": "test-embed"}}

	if r := fx.RunWith(t, env, "embed"); r.Code != 0 || !strings.Contains(r.Stderr, "embedded 4 messages with test-embed") {
		t.Fatalf("embed: exit %d, %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := fx.RunWith(t, env, "embed"); r.Code != 0 || !strings.Contains(r.Stderr, "embedded 0 messages") {
		t.Fatalf("embed again: exit %d, %s", r.Code, r.Stderr)
	}
	if n := len(srv.Counts()); n != 4 || srv.Calls() != 1 {
		t.Fatalf("the server embedded %d texts in %d calls, want 4 in 1", n, srv.Calls())
	}
	r := fx.RunWith(t, env, "embed", "--status", "--json")
	status := clitest.DecodeJSON[loom.VectorStatus](t, r.Stdout)
	if status.Vectors != 4 || status.Pending != 0 || status.Model != "test-embed" {
		t.Fatalf("status %+v", status)
	}

	r = fx.RunWith(t, env, "search", "-a", "which chats are still running", "--semantic", "--json")
	hits := clitest.DecodeJSON[[]loom.SearchHit](t, r.Stdout)
	if r.Code != 0 || len(hits) == 0 || !strings.Contains(strings.ReplaceAll(hits[0].Snippet, "**", ""), "still running") || hits[0].Tier != loom.TierMeaning {
		t.Fatalf("--semantic: exit %d, %+v %s", r.Code, hits, r.Stderr)
	}
	r = fx.RunWith(t, env, "search", "-a", "rsync", "--json")
	hits = clitest.DecodeJSON[[]loom.SearchHit](t, r.Stdout)
	if r.Code != 0 || len(hits) < 2 || !strings.Contains(hits[0].Snippet, "rsync") {
		t.Fatalf("fused: exit %d, %+v %s", r.Code, hits, r.Stderr)
	}
	if r := fx.RunWith(t, env, "search", "x", "--semantic", "--keyword"); r.Code != cli.ExitUsage {
		t.Fatalf("--semantic --keyword: exit %d", r.Code)
	}
	// Without an endpoint: keywords only, --semantic refused in one line.
	r = fx.Run(t, "search", "-a", "which chats", "--semantic")
	if r.Code == 0 || !strings.Contains(r.Stderr, "needs an embeddings endpoint") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
		t.Fatalf("--semantic without an endpoint: exit %d, %q", r.Code, r.Stderr)
	}
}

// Without an embeddings endpoint loom says once, on a terminal, that
// search ranks by keywords only.
func TestSearchSaysOnceKeywordsOnly(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	clitest.Say(t, fx, "registry", 1)
	tty := clitest.RunOpts{Tty: true}
	first := fx.RunWith(t, tty, "search", "-a", "wombat")
	if first.Code != 0 || strings.Count(first.Stderr, "Search ranks by keywords: ") != 1 || len(clitest.Lines(first.Stderr)) != 1 || len(first.Stderr) > 81 {
		t.Fatalf("first search: exit %d, %q", first.Code, first.Stderr)
	}
	if again := fx.RunWith(t, tty, "search", "-a", "wombat"); strings.Contains(again.Stderr, "ranks by keywords") {
		t.Fatalf("said again: %q", again.Stderr)
	}
}

// loom mcp's search_sessions ranks by meaning with semantic: true where
// an embeddings model is configured, and refuses semantic with keyword.
func TestMCPSearchByMeaning(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenEngine(t)
	storetest.AppendTexts(t, st, &loom.Session{UserID: "local", Key: "cli:registry", Project: fx.Proj, Cwd: fx.Project},
		"add an ActiveSessionRegistry", "the registry keeps which sessions are still running")
	st.Close()
	srv := embeddingtest.New()
	defer srv.Close()
	env := map[string]string{"LOOM_EMBEDDINGS_URL": srv.URL + "/v1", "LOOM_EMBEDDINGS_MODEL": "test-embed"}
	if r := fx.RunWith(t, clitest.RunOpts{Env: env}, "embed"); r.Code != 0 {
		t.Fatalf("embed: exit %d, %s", r.Code, r.Stderr)
	}
	cs := clitest.ConnectStdio(t, fx, "LOOM_EMBEDDINGS_URL="+env["LOOM_EMBEDDINGS_URL"], "LOOM_EMBEDDINGS_MODEL=test-embed")
	c := clitest.MustCall(t, cs, "search_sessions", map[string]any{"query": "which chats are still running", "semantic": true})
	if !strings.Contains(c.Text, "still") || !strings.Contains(clitest.MustJSON(t, c.Data), `"tier":"meaning"`) {
		t.Fatalf("semantic: %s", c.Text)
	}
	clitest.WantToolError(t, cs, "search_sessions", map[string]any{"query": "x", "semantic": true, "keyword": true}, "cannot be used together")
}

// "No message holds every word" is said only when no message does: not
// when a search by meaning alone or a fused one ranks a message of
// other words first though one holds every word, and not by --semantic,
// which ranks no words.
func TestSearchSaysNoEveryWordOnlyWhenTrue(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenEngine(t)
	storetest.AppendTexts(t, st, &loom.Session{UserID: "local", Key: "cli:rsync", Title: "deploys"},
		"deploy the site with rsync", "done: rsync over ssh", "rsyncing the deploys deployed")
	st.Close()
	srv := embeddingtest.New()
	defer srv.Close()
	env := clitest.RunOpts{Env: map[string]string{"LOOM_EMBEDDINGS_URL": srv.URL + "/v1", "LOOM_EMBEDDINGS_MODEL": "test-embed"}}
	if r := fx.RunWith(t, env, "embed"); r.Code != 0 {
		t.Fatalf("embed: exit %d, %s", r.Code, r.Stderr)
	}
	for _, args := range [][]string{
		{"search", "-a", "deploy rsync", "--semantic", "--json"},
		{"search", "-a", "deploy rsync", "--json"},
		{"search", "-a", "deploy rsync", "--keyword", "--json"},
	} {
		r := fx.RunWith(t, env, args...)
		hits := clitest.DecodeJSON[[]loom.SearchHit](t, r.Stdout)
		if r.Code != 0 || len(hits) == 0 || strings.Contains(r.Stderr, "No message holds every word") {
			t.Errorf("%v: exit %d, %q", args, r.Code, r.Stderr)
		}
		if args[3] != "--semantic" && (hits[0].Tier != "" || !strings.Contains(hits[0].Snippet, "rsync")) {
			t.Errorf("%v: first hit %+v", args, hits[0])
		}
	}
	if r := fx.RunWith(t, env, "search", "-a", "wombat rsync", "--json"); r.Code != 0 || !strings.Contains(r.Stderr, "No message holds every word") {
		t.Errorf("no message holds wombat: exit %d, %q", r.Code, r.Stderr)
	}
}
