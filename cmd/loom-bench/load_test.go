package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary serve as a worker process of the load
// run, as the loom-bench binary does.
func TestMain(m *testing.M) {
	if spec := os.Getenv(loadWorkerEnv); spec != "" {
		os.Exit(loadWorkerMain(spec))
	}
	os.Exit(m.Run())
}

// The load run at a small scale, on both engines: two processes, 50
// writers on sessions of their own and 5 on one shared session; nothing
// lost or duplicated, seq gap-free. `go run ./cmd/loom-bench -load` runs it at
// 100,000 messages.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	pg, err := testPostgres(t)
	if err != nil {
		t.Logf("PostgreSQL is unreachable, SQLite only: %v", err)
		pg = ""
	}
	var out bytes.Buffer
	if err := loadMain(context.Background(), &out, t.TempDir(), pg, loadShape{Messages: 2750, Distinct: 50, Shared: 5, Procs: 2}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log("\n" + out.String())
}

// testPostgres returns the test server's URL ($LOOM_TEST_POSTGRES, else
// the local one) and why it does not answer, if it does not; in CI, where
// nothing may be skipped silently, that fails the test.
func testPostgres(t *testing.T) (string, error) {
	pg := os.Getenv("LOOM_TEST_POSTGRES")
	if pg == "" {
		pg = defaultPostgres
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := pingPostgres(ctx, pg)
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("PostgreSQL: %v", err)
	}
	return pg, err
}

// vmRSS reads a live process's resident memory.
func TestVMRSS(t *testing.T) {
	kb, err := vmRSS(os.Getpid())
	if err != nil || kb <= 0 {
		t.Fatalf("vmRSS of this process: %d KiB, %v", kb, err)
	}
}
