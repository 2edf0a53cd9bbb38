package embed_test

import (
	"os"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding/embeddingtest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/storetest"
)

// With [secrets] redact_on_write, loom embed embeds the store's
// messages as without it: redaction is the store's rule, and the store
// keeps its vectors.
func TestEmbedWithRedactOnWrite(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	st := fx.OpenEngine(t)
	storetest.AppendTexts(t, st, &loom.Session{UserID: "local", Key: "cli:pool", Title: "pool"},
		"why does the pool time out", "the idle timeout is 30s")
	st.Close()
	clitest.WriteConfig(t, fx, "[secrets]\nredact_on_write = true\n")
	srv := embeddingtest.New()
	defer srv.Close()
	env := clitest.RunOpts{Env: map[string]string{"LOOM_EMBEDDINGS_URL": srv.URL + "/v1", "LOOM_EMBEDDINGS_MODEL": "test-embed"}}
	if r := fx.RunWith(t, env, "embed"); r.Code != 0 || !strings.Contains(r.Stderr, "embedded 2 messages with test-embed") {
		t.Fatalf("embed: exit %d, %s %s", r.Code, r.Stdout, r.Stderr)
	}
	r := fx.RunWith(t, env, "embed", "--status", "--json")
	if status := clitest.DecodeJSON[loom.VectorStatus](t, r.Stdout); status.Vectors != 2 || status.Pending != 0 {
		t.Fatalf("status %+v", status)
	}
}

// On a store not created yet (no session imported or written), loom
// embed says there is nothing to embed, and --status that nothing is
// embedded, instead of "this store keeps no vectors"; neither creates
// the store.
func TestEmbedBeforeTheStoreExists(t *testing.T) {
	t.Parallel()
	clitest.SkipOnPostgres(t, "a PostgreSQL store is created by its schema")
	fx := clitest.NewEmptyFixture(t)
	srv := embeddingtest.New()
	defer srv.Close()
	env := clitest.RunOpts{Env: map[string]string{"LOOM_EMBEDDINGS_URL": srv.URL + "/v1", "LOOM_EMBEDDINGS_MODEL": "test-embed"}}
	if r := fx.RunWith(t, env, "embed"); r.Code != 0 || strings.Contains(r.Stderr, "keeps no vectors") || !strings.Contains(r.Stderr, "nothing to embed") {
		t.Errorf("embed before the store: exit %d, %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := fx.RunWith(t, env, "embed", "--status"); r.Code != 0 || r.Stdout != "no message is embedded yet\n" {
		t.Errorf("embed --status before the store: exit %d, %q %q", r.Code, r.Stdout, r.Stderr)
	}
	r := fx.RunWith(t, env, "embed", "--status", "--json")
	if status := clitest.DecodeJSON[loom.VectorStatus](t, r.Stdout); r.Code != 0 || status.Vectors != 0 || status.Pending != 0 {
		t.Errorf("embed --status --json before the store: exit %d, %+v", r.Code, status)
	}
	if _, err := os.Stat(fx.DB); !os.IsNotExist(err) {
		t.Errorf("the store was created: %v", err)
	}
}
