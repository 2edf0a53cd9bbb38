package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/embedding/embeddingtest"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sqlite"
)

// newOptions returns the options of loom embed on a SQLite store in a
// temporary directory holding one session of texts, and its output.
func newOptions(t *testing.T, texts ...string) (opts *Options, out, errOut *bytes.Buffer) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if len(texts) > 0 {
		storetest.AppendTexts(t, st, &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:embed"}, texts...)
	}
	ios, _, out, errOut := term.Test()
	open := func(context.Context) (loom.Engine, error) { return st, nil }
	return &Options{IO: ios, Store: open, ReadStore: open}, out, errOut
}

// Embed embeds every message once with the endpoint it is given, and
// --status says how many are embedded and how many wait.
func TestEmbedRunEmbedsEachMessageOnce(t *testing.T) {
	t.Parallel()
	srv := embeddingtest.New()
	defer srv.Close()
	opts, out, errOut := newOptions(t, "why does the pool time out", "the idle timeout is 30s", "raise it")
	opts.Client = func(context.Context) (*embedding.Client, string) {
		return embedding.New(srv.URL+"/v1", "test-embed", ""), ""
	}
	opts.Status = true
	if err := embedRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "no message is embedded yet\n" {
		t.Errorf("status before embedding: %q", got)
	}
	opts.Status = false
	for i, want := range []string{"embedded 3 messages with test-embed\n", "embedded 0 messages with test-embed\n"} {
		out.Reset()
		errOut.Reset()
		if err := embedRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		if errOut.String() != want || out.String() != "3 messages embedded with test-embed, 0 waiting\n" {
			t.Errorf("run %d: stderr %q, stdout %q", i+1, errOut, out)
		}
	}
	if srv.Calls() != 1 {
		t.Errorf("the endpoint was called %d times, want once", srv.Calls())
	}
	out.Reset()
	opts.Status, opts.JSON = true, true
	if err := embedRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var s loom.VectorStatus
	if err := json.Unmarshal(out.Bytes(), &s); err != nil || s.Vectors != 3 || s.Pending != 0 || s.Model != "test-embed" {
		t.Errorf("--status --json: %s (%v)", out, err)
	}
}

// Without an embeddings endpoint, configured or local, embed says so
// and embeds nothing.
func TestEmbedRunWithoutEndpoint(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(nil)
	gone.Close()
	opts, out, _ := newOptions(t, "a message")
	ios, _, _, _ := term.Test()
	home := t.TempDir()
	f := &command.Factory{IO: ios, LocalModelURL: gone.URL, Env: func(k string) string {
		return map[string]string{"LOOM_HOME": home}[k]
	}}
	opts.Client = command.EmbeddingsOf(f).Client
	err := embedRun(t.Context(), opts)
	if loom.ErrorCode(err) != loom.EINVALID || !strings.Contains(err.Error(), "no embeddings endpoint is set") {
		t.Fatalf("err = %v, want EINVALID: no embeddings endpoint", err)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q, want nothing", out)
	}
}

// The command fills its options from the invocation and its flags.
func TestNewCmdEmbedOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, NewCmdEmbed, "--status")
	if !got.Status || got.JSON || got.Store == nil || got.ReadStore == nil || got.Client == nil {
		t.Errorf("options: %+v", got)
	}
}
