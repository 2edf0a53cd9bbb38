package embed_test

import (
	"context"
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
	st, err := clitest.OpenEngine(context.Background(), fx.DB)
	if err != nil {
		t.Fatal(err)
	}
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
