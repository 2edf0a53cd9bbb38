package semantic_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/embedding/embeddingtest"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/semantic"
	"github.com/loomhq/loom/sqlite"
)

// The test binary is also the embedding process the kill test kills:
// with LOOM_TEST_EMBED set to "store url", it embeds that store and
// exits.
func TestMain(m *testing.M) {
	if arg := os.Getenv("LOOM_TEST_EMBED"); arg != "" {
		db, url, _ := strings.Cut(arg, " ")
		ctx := context.Background()
		st, err := sqlite.Open(ctx, db)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		e := &semantic.Embedder{Store: st, Client: embedding.New(url, "test-embed", ""), Batch: 10}
		if _, err := e.Run(ctx, 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// newStore is a SQLite store with one session of texts, a message each.
func newStore(t *testing.T, texts ...string) (*sqlite.Store, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "sessions.db")
	st, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	storetest.AppendTexts(t, st, &loom.Session{ID: loom.NewID(), UserID: "local", Key: "cli:test"}, texts...)
	return st, db
}

func numbered(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("message number %d about topic %d", i, i%7)
	}
	return texts
}

// kill -9 of the embedding process while a request is in flight, then a
// run to the end: every message has its vector, and the server embedded
// each one once.
func TestEmbedKilledMidRunEmbedsNothingTwice(t *testing.T) {
	texts := numbered(95)
	st, db := newStore(t, texts...)
	srv := embeddingtest.New()
	defer srv.Close()
	var calls atomic.Int32
	inFlight := make(chan struct{})
	srv.Hold = func(ctx context.Context, _ []string) bool {
		if calls.Add(1) != 4 {
			return true
		}
		close(inFlight)
		<-ctx.Done() // the client was killed
		return false
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run=^$")
	child.Env = append(os.Environ(), "LOOM_TEST_EMBED="+db+" "+srv.URL+"/v1")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	<-inFlight
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if n := len(srv.Counts()); n != 30 {
		t.Fatalf("before the kill, %d texts were embedded; want the 3 batches of 10 answered", n)
	}
	status, err := st.VectorStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if status.Vectors != 30 || status.Pending != 65 {
		t.Fatalf("after the kill: %+v, want 30 vectors and 65 waiting", status)
	}

	again := exec.Command(self, "-test.run=^$")
	again.Env = child.Env
	if out, err := again.CombinedOutput(); err != nil {
		t.Fatalf("the second run: %v\n%s", err, out)
	}
	counts := srv.Counts()
	if len(counts) != len(texts) {
		t.Errorf("%d texts embedded, want %d", len(counts), len(texts))
	}
	for text, n := range counts {
		if n != 1 {
			t.Errorf("%q embedded %d times", text, n)
		}
	}
	status, err = st.VectorStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if status.Vectors != int64(len(texts)) || status.Pending != 0 || status.Model != "test-embed" {
		t.Errorf("at the end: %+v, want every message embedded with test-embed", status)
	}
}

// Only one process embeds a store at a time.
func TestEmbedClaimIsExclusive(t *testing.T) {
	_, db := newStore(t, "one", "two")
	a, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	release, ok, err := a.ClaimVectors(t.Context())
	if err != nil || !ok {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if _, ok, _ := b.ClaimVectors(t.Context()); ok {
		t.Fatal("a second handle claimed the store while the first held it")
	}
	release()
	if _, ok, _ := b.ClaimVectors(t.Context()); !ok {
		t.Fatal("the claim was not free after release")
	}
}
