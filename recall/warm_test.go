package recall_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/recall"
	"github.com/loomhq/loom/secrets"
)

// A warm recall answers over its socket what a recall of its store
// answers, redacted when asked; it refuses a question about another
// store and a question that is not one; a second one on the same
// socket is refused while the first listens, and takes over once it has
// stopped; the socket is its user's alone, and removed when it stops.
// A question of another version of loom is answered as one of another
// store.
func TestWarmRecall(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st := store(t)
	session(t, st, "api", "Connection pool exhausted",
		"The API times out under load; the postgres connection pool is exhausted.",
		"Decided: pgxpool max_conns 32; the key was AKIAZ3MHQW7PLN5RXT4B for the dump bucket.")
	state := filepath.Join(t.TempDir(), "state")
	sock := recall.WarmSocket(state, "file:one.db")
	if other := recall.WarmSocket(state, "file:other.db"); other == sock || filepath.Dir(other) != filepath.Dir(sock) {
		t.Fatalf("the sockets of two stores: %s and %s", sock, other)
	}
	done, err := recall.Serve(ctx, sock, recall.Answerer("file:one.db", "1.2.0", st, secrets.Default))
	if err != nil {
		t.Fatal(err)
	}
	if pid := recall.Holder(sock); pid != os.Getpid() {
		t.Fatalf("the warm recall is held by pid %d, want this process's %d", pid, os.Getpid())
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v, %v; want mode 0600", fi, err)
	}
	q := recall.Question{Store: "file:one.db", Prompt: "why does the postgres pool time out?", UserID: "alice", ProjectID: "api",
		Deadline: time.Now().Add(time.Minute), Version: "1.2.0"}
	ask := func(q recall.Question) (*recall.Answer, error) {
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return recall.Ask(actx, sock, q)
	}
	plain, err := ask(q)
	if err != nil {
		t.Fatal(err)
	}
	want, err := recall.Recall(ctx, st, recall.Options{Prompt: q.Prompt, UserID: "alice", ProjectID: "api"})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Text != want.Text() || !strings.Contains(plain.Text, "AKIAZ3MHQW7PLN5RXT4B") {
		t.Fatalf("warm recall answered %q; a recall of its store answers %q", plain.Text, want.Text())
	}
	q.Redact = true
	red, err := ask(q)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(red.Text, "AKIAZ3MHQW7PLN5RXT4B") || !strings.Contains(red.Text, "[REDACTED:") || !strings.Contains(red.Text, "max_conns 32") {
		t.Fatalf("asked redacted, the warm recall answered %q", red.Text)
	}
	q.Version = "1.1.0"
	if a, err := ask(q); !errors.Is(err, recall.ErrOtherStore) {
		t.Fatalf("a question of another version: %+v, %v", a, err)
	}
	q.Version = "1.2.0"
	if a, err := ask(q); err != nil || a.Text != red.Text {
		t.Fatalf("a question of its version: %+v, %v", a, err)
	}
	q.Store = "file:other.db"
	if a, err := ask(q); !errors.Is(err, recall.ErrOtherStore) {
		t.Fatalf("a question about another store: %+v, %v", a, err)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("not json\n"))
	var a recall.Answer
	if err := json.NewDecoder(c).Decode(&a); err != nil || !strings.Contains(a.Error, "not a question") {
		t.Fatalf("not a question: %+v, %v", a, err)
	}
	c.Close()

	if _, err := recall.Serve(ctx, sock, recall.Answerer("file:one.db", "", st, nil)); !errors.Is(err, recall.ErrServing) || !strings.Contains(err.Error(), "another loom answers") {
		t.Fatalf("a second warm recall on the same socket: %v", err)
	}
	// One waiting for the first to stop is let go once it has.
	free := make(chan error, 1)
	go func() { free <- recall.WaitFree(t.Context(), sock) }()
	cancel()
	<-done
	if err := <-free; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) || recall.Holder(sock) != 0 {
		t.Fatalf("a warm recall stopped left its socket (%v) or its lock (pid %d)", err, recall.Holder(sock))
	}
	// Once the first has stopped, a second takes its socket.
	ctx2 := t.Context()
	if _, err := recall.Serve(ctx2, sock, recall.Answerer("file:one.db", "", st, nil)); err != nil {
		t.Fatal(err)
	}
	q.Store, q.Redact, q.Version = "file:one.db", false, ""
	if a, err := recall.Ask(ctx2, sock, q); err != nil || a.Text != plain.Text {
		t.Fatalf("the second warm recall: %+v, %v", a, err)
	}
	// No one listens: an error at once, for the hook to recall itself.
	if _, err := recall.Ask(ctx2, filepath.Join(t.TempDir(), "none.sock"), q); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("asking where no one listens: %v", err)
	}
}
