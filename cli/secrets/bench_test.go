package secrets

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/cputime"
	"github.com/loomhq/loom/secrets/secretstest"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/sqlite"
)

// benchStoreVersion names the generated store's shape: change it when
// the workload changes, and the next run generates the store again.
const benchStoreVersion = 1

// millionStore returns a SQLite store of n messages (1,000,000 unless
// LOOM_BENCH_MESSAGES says), in sessions of 1,000, generated once and
// kept under os.TempDir for later runs. The messages are secretstest's
// workload over this repository's code, as BenchmarkScanMessages reads
// them: one in fifty carries a fake secret.
func millionStore(b *testing.B) (path string, n int) {
	b.Helper()
	n = 1_000_000
	if v, err := strconv.Atoi(os.Getenv("LOOM_BENCH_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	dir := filepath.Join(os.TempDir(), "loom-bench-secrets")
	path = filepath.Join(dir, fmt.Sprintf("v%d-%d.db", benchStoreVersion, n))
	if _, err := os.Stat(path); err == nil {
		return path, n
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	w, err := secretstest.NewWorkload("../../*.go", 11)
	if err != nil {
		b.Fatal(err)
	}
	// Generated under another name and renamed when whole: a run cut
	// short leaves no half store to be taken for a whole one.
	tmp := path + ".part"
	os.Remove(tmp)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, tmp)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	const perSession = 1000
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var batch []*loom.SessionData
	for i := 0; i < n; i += perSession {
		s := &loom.Session{ID: loom.NewID(), UserID: "local", Key: fmt.Sprintf("cli:bench:%d", i), Kind: loom.KindMain, Title: fmt.Sprintf("bench %d", i/perSession), CreatedAt: at, UpdatedAt: at}
		msgs := make([]*loom.Message, min(perSession, n-i))
		for j := range msgs {
			msgs[j] = w.Message(i + j)
			msgs[j].Seq, msgs[j].CreatedAt = int64(j+1), at
		}
		batch = append(batch, &loom.SessionData{Session: s, Messages: msgs})
		if len(batch) == 10 || i+perSession >= n {
			if err := st.Import(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	os.Remove(tmp + "-wal")
	os.Remove(tmp + "-shm")
	b.Logf("generated %d messages in %s (%s)", n, path, time.Since(start).Round(time.Second))
	return path, n
}

// benchOptions are the options of `loom secrets scan --full` over the
// store at path, with its state (the scan's memo) in a directory of the
// benchmark's.
func benchOptions(b *testing.B, path string) *ScanOptions {
	ios, _, _, _ := term.Test()
	home := b.TempDir()
	env := map[string]string{"LOOM_HOME": home, "HOME": home, "LOOM_DB": path}
	inv := command.NewInvocation(&command.Factory{
		IO:    ios,
		Env:   func(k string) string { return env[k] },
		Getwd: func() (string, error) { return home, nil },
		OpenStore: func(ctx context.Context, url string, access command.Access, _ ...sessionstore.Option) (loom.Engine, error) {
			return sqlite.OpenMode(ctx, url, sqlite.ModeRead)
		},
		Version: "bench",
	})
	b.Cleanup(func() { inv.Close() })
	opts := &ScanOptions{Common: commonOf(inv), Full: true}
	opts.User = inv.User()
	return opts
}

// BenchmarkScanMillion is `loom secrets scan --full` over a store of a
// million messages, as the command runs it (scan: every session, read by
// as many workers as there are cores, each message through the
// detector). The baseline, in the same run, reads the same messages the
// same way without looking at them: what the store costs alone. The
// budget is 60 s for the million.
func BenchmarkScanMillion(b *testing.B) {
	path, n := millionStore(b)
	ctx := context.Background()
	opts := benchOptions(b, path)
	b.ResetTimer()
	var scanT, readT time.Duration
	var scanCPU, readCPU time.Duration
	for i := 0; i < b.N; i++ {
		cpu0, t0 := cputime.Used(), time.Now()
		read := readAll(b, ctx, &opts.Common)
		readT, readCPU = readT+time.Since(t0), readCPU+cputime.Used()-cpu0

		cpu0, t0 = cputime.Used(), time.Now()
		rep, err := scan(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		scanT, scanCPU = scanT+time.Since(t0), scanCPU+cputime.Used()-cpu0
		if rep.ScannedMessages != n || read != n || rep.Secrets < n/50 {
			b.Fatalf("scanned %d messages (read %d), found %d secrets; want %d and at least %d", rep.ScannedMessages, read, rep.Secrets, n, n/50)
		}
	}
	per := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) * 1e6 / float64(n) }
	b.ReportMetric(per(scanT), "s/1M-msgs")
	b.ReportMetric(per(scanCPU), "cpu-s/1M-msgs")
	b.ReportMetric(per(readT), "baseline-s/1M-msgs")
	b.ReportMetric(per(readCPU), "baseline-cpu-s/1M-msgs")
	b.ReportMetric(scanT.Seconds()/readT.Seconds(), "ratio")
}

// readAll reads every message of every session as scan does, by as many
// workers as there are cores, and returns how many it read.
func readAll(b *testing.B, ctx context.Context, c *Common) int {
	st, err := c.ReadStore(ctx)
	if err != nil {
		b.Fatal(err)
	}
	sessions, err := sessionScope(ctx, c, st, "")
	if err != nil {
		b.Fatal(err)
	}
	next := make(chan *loom.Session)
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range max(1, min(runtime.GOMAXPROCS(0), len(sessions))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range next {
				msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{Oldest: true})
				if err != nil {
					b.Error(err)
					continue
				}
				mu.Lock()
				total += len(msgs)
				mu.Unlock()
			}
		}()
	}
	for _, s := range sessions {
		next <- s
	}
	close(next)
	wg.Wait()
	return total
}
