package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/postgres"
)

const defaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var admin struct {
	once sync.Once
	url  string
	pool *pgxpool.Pool
	err  error
}

// server returns the test server's URL and a pool for making schemas. An
// unreachable server skips the test, except in CI, where nothing may be
// skipped silently.
func server(t testing.TB) (string, *pgxpool.Pool) {
	t.Helper()
	admin.once.Do(func() {
		admin.url = os.Getenv("LOOM_TEST_POSTGRES")
		if admin.url == "" {
			admin.url = defaultURL
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		admin.pool, admin.err = pgxpool.New(ctx, admin.url)
		if admin.err == nil {
			admin.err = admin.pool.Ping(ctx)
		}
	})
	if admin.err != nil {
		msg := "PostgreSQL at " + redact(admin.url) + " is unreachable (set LOOM_TEST_POSTGRES): " + admin.err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return admin.url, admin.pool
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}

// freshSchema creates an empty schema, dropped when the test ends, and
// returns a URL whose connections use it.
func freshSchema(t testing.TB) string {
	t.Helper()
	base, pool := server(t)
	var b [6]byte
	rand.Read(b[:])
	name := "loomtest_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE SCHEMA `+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func open(t testing.TB, dsn string) *postgres.Store {
	t.Helper()
	return storetest.Must(postgres.Open(context.Background(), dsn))(t)
}

// shared returns how to open stores on one pool to a fresh schema: like
// processes of their own, without a connection each.
func shared(t *testing.T) conformance.Opener {
	pool, err := pgxpool.New(context.Background(), freshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return func(t *testing.T) loom.Engine {
		return storetest.Must(postgres.OpenPool(context.Background(), pool))(t)
	}
}

func TestConformance(t *testing.T) {
	conformance.Run(t, shared, func(t *testing.T, st loom.Store, sessionID string) {
		if _, err := st.(*postgres.Store).Pool().Exec(context.Background(), `UPDATE locks SET pid = $1 WHERE session_id = $2`, conformance.DeadPID(t), sessionID); err != nil {
			t.Fatal(err)
		}
	})
}

// Servers starting at once on a new database migrate it once; opening
// again changes nothing.
func TestMigrations(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A pool of its own each, as separate processes have.
			cfg, err := pgxpool.ParseConfig(dsn)
			if err != nil {
				errs <- err
				return
			}
			st, err := postgres.OpenConfig(context.Background(), cfg)
			if err != nil {
				errs <- err
				return
			}
			st.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent open: %v", err)
	}
	st := open(t, dsn)
	st2 := open(t, dsn)
	var n, latest int
	if err := st2.Pool().QueryRow(context.Background(), `SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &latest); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("migrations/*.sql")
	if n != len(files) || latest != len(files) {
		t.Fatalf("schema_migrations holds %d rows up to version %d, want %d and %d", n, latest, len(files), len(files))
	}
	s := &loom.Session{UserID: "alice", Key: "cli:x"}
	if err := st.Append(context.Background(), s, &loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
}

// Stores on one pool share its connections but hold locks apart; closing
// one leaves the pool to the others.
func TestOpenPool(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	a, err := postgres.OpenPool(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	b, err := postgres.OpenPool(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lease, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, "s1"); loom.ErrorCode(err) != loom.ELOCKED {
		t.Fatalf("second store took a held lock: %v", err)
	}
	lease.Release(ctx)
	a.Close()
	a.Close()
	if _, err := b.Sessions(ctx, loom.SessionFilter{}); err != nil {
		t.Fatalf("after closing the other store: %v", err)
	}
	// Stores opened with a URL have pools of their own.
	c, d := open(t, dsn), open(t, dsn)
	if c.Pool() == d.Pool() {
		t.Fatal("two stores opened with one URL share a pool")
	}
}

// lease_ttl in the URL sets the store's lease, and is not sent to the
// server; a bad one is refused.
func TestLeaseTTLParameter(t *testing.T) {
	t.Parallel()
	dsn := freshSchema(t)
	st := open(t, dsn+"&lease_ttl=2s")
	if st.LeaseTTL != 2*time.Second {
		t.Fatalf("LeaseTTL = %v, want 2s", st.LeaseTTL)
	}
	if def := open(t, dsn); def.LeaseTTL != loom.LeaseTTL {
		t.Fatalf("default LeaseTTL = %v", def.LeaseTTL)
	}
	for _, bad := range []string{"&lease_ttl=soon", "&lease_ttl=-1s", "&lease_ttl=0s", "&lease_ttl="} {
		if _, err := postgres.Open(context.Background(), dsn+bad); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("Open with %s = %v, want an invalid-input error", bad, err)
		}
	}
}

func TestOpenRejects(t *testing.T) {
	for _, dsn := range []string{"", "sessions.db", "sqlite:x.db", "mysql://x"} {
		if _, err := postgres.Open(context.Background(), dsn); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("Open(%q) = %v, want an invalid-input error", dsn, err)
		}
	}
}

// A server that cannot be reached is said once in one line, although pgx
// tries it twice (with TLS and without, the default sslmode) and names
// both attempts; the error still unwraps to pgx's.
func TestOpenUnreachableSaysItOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = postgres.Open(context.Background(), "postgres://loom@"+addr+"/loom")
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	msg := err.Error()
	if n := strings.Count(msg, "connection refused"); n != 1 || strings.Contains(msg, "\n") ||
		!strings.Contains(msg, "cannot connect as user loom to database loom") {
		t.Errorf("error = %q, want one line saying the refusal once", msg)
	}
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		t.Errorf("error %v does not unwrap to pgx's connect error", err)
	}
}

func TestLease(t *testing.T) {
	dsn := freshSchema(t)
	conformance.RunLease(t, func(t *testing.T, ttl time.Duration) loom.Store {
		st := open(t, dsn)
		if ttl > 0 {
			st.LeaseTTL = ttl
		}
		return st
	})
}

func FuzzSearchQuery(f *testing.F) { conformance.FuzzSearch(f, open(f, freshSchema(f))) }

func FuzzResolve(f *testing.F) { conformance.FuzzResolve(f, open(f, freshSchema(f))) }

func TestVectors(t *testing.T) {
	t.Parallel()
	storetest.Vectors(t, open(t, freshSchema(t)))
}

// The store's connections do not compile queries (JIT), which cost a
// rare word's search 25–30 ms of its 30; a caller's AfterConnect still
// runs, and a pool the caller gives OpenPool keeps its settings.
func TestConnectionsHaveNoJIT(t *testing.T) {
	ctx := context.Background()
	dsn := freshSchema(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var called atomic.Bool
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		called.Store(true)
		_, err := c.Exec(ctx, "SET application_name = 'loomtest'")
		return err
	}
	st := storetest.Must(postgres.OpenConfig(ctx, cfg))(t)
	for name, want := range map[string]string{"jit": "off", "application_name": "loomtest"} {
		if v, err := st.Setting(ctx, name); err != nil || v != want {
			t.Errorf("%s = %q, %v; want %q", name, v, err, want)
		}
	}
	if !called.Load() {
		t.Error("the caller's AfterConnect did not run")
	}
	if v, err := open(t, dsn).Setting(ctx, "jit"); err != nil || v != "off" {
		t.Errorf("Open: jit = %q, %v", v, err)
	}
}

// A statement whose context ends stops on the server, even when its
// process exits at once (a loom search refused for running out of time):
// pgx closes the connection and sends the server a cancel request from a
// goroutine that the exit stops before it is sent, and the server ran
// the statement on to its end (8 s of a refused search at a million
// messages). The server now checks that its client is there
// (client_connection_check_interval) and ends it. The statement is run
// by this test's binary as a process of its own, which exits as soon as
// its context of 300 ms has ended.
func TestCancelledStatementStopsOnServer(t *testing.T) {
	if dsn := os.Getenv("LOOM_TEST_CANCEL_AND_EXIT"); dsn != "" {
		st, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err = st.Pool().Exec(ctx, "SELECT pg_sleep(60) AS "+os.Getenv("LOOM_TEST_MARKER"))
		fmt.Println("ended:", err)
		os.Exit(0)
	}
	_, admin := server(t)
	dsn := freshSchema(t)
	open(t, dsn).Close() // the schema made before the process runs
	var b [6]byte
	rand.Read(b[:])
	marker := fmt.Sprintf("loom_cancel_%x", b)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCancelledStatementStopsOnServer$")
	cmd.Env = append(os.Environ(), "LOOM_TEST_CANCEL_AND_EXIT="+dsn, "LOOM_TEST_MARKER="+marker)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ended:") || strings.Contains(string(out), "ended: <nil>") {
		t.Fatalf("the process that cancels: %v: %s", err, out)
	}
	// Waits for the server's statement to end: long enough for a busy
	// server to notice (it checks every second), a third of the 60 s it
	// would run unchecked.
	watch, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	for {
		var n int
		if err := admin.QueryRow(watch, `SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND strpos(query, $1) > 0`, marker).Scan(&n); err != nil {
			t.Fatalf("the statement of a process that exited still runs on the server 20 s after its context ended (or pg_stat_activity: %v)", err)
		}
		if n == 0 {
			return
		}
		select {
		case <-watch.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}
