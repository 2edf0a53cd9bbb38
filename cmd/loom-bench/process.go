package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// processList times `loom session list --all-projects` as a whole process,
// beside the floor program that opens the same file and lists the same
// sessions (cmd/loom-bench/floor/sqlread).
func processList(ctx context.Context, c config) (result, error) {
	bins, err := buildProcessPrograms(ctx, filepath.Dir(c.db), c.loomBin)
	if err != nil {
		return result{}, err
	}
	env := append(os.Environ(), "LOOM_DB="+c.db, "LOOM_USER=bench", "LOOM_HOME="+filepath.Dir(c.db))
	run := func(bin string, args ...string) func() error {
		return func() error {
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		}
	}
	return measure("`loom session list` as a whole process", "≤ 50 ms", 50, 30,
		run(bins["loom"], "session", "list", "--all-projects"),
		run(bins["sqlread"], "list", c.db, "bench")), nil
}

// resumeMemory measures the memory allocated while resuming a small and
// the big session: reading the session, its newest 10 messages for
// display, and repairing interrupted tool calls.
func resumeMemory(ctx context.Context, st *sqlite.Store, bigID, user string) string {
	var small string
	st.DB().QueryRowContext(ctx, `SELECT id FROM sessions WHERE user_id = ? AND message_count < 1000 LIMIT 1`, user).Scan(&small)
	alloc := func(id string) uint64 {
		runtime.GC()
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		lease, err := st.Lock(ctx, id)
		if err == nil {
			st.Session(ctx, id)
			st.Messages(ctx, id, loom.MessageQuery{Limit: 10})
			st.RepairInterrupted(ctx, id)
			lease.Release(ctx)
		}
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	alloc(small)
	s, b := alloc(small), alloc(bigID)
	return fmt.Sprintf("Memory while resuming (session, newest 10 messages, repair): %d-message session %.1f KiB allocated, 100,000-message session %.1f KiB allocated.",
		100, float64(s)/1024, float64(b)/1024)
}
