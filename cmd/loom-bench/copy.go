package main

// The copy run: a generated SQLite store copied to PostgreSQL and back
// the documented way, `loom session export --all | loom --db … session
// import -`, with the real loom binary; the three stores must export the
// same bytes.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// copyMain generates a SQLite store of n messages (sessions of 1,000) in
// dir, copies it into a fresh schema of the PostgreSQL server at pg and
// from there into a new SQLite store, and prints the times.
func copyMain(ctx context.Context, out io.Writer, dir, pg, bin string, n int) error {
	if pg == "" {
		return fmt.Errorf("-copy needs a PostgreSQL server (-postgres)")
	}
	work, bin, err := workDir(ctx, dir, "copy-", bin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	src, back := filepath.Join(work, "src.db"), filepath.Join(work, "back.db")
	fmt.Fprintf(os.Stderr, "copy: generating %d messages\n", n)
	if err := generateStore(ctx, src, n); err != nil {
		return err
	}
	pgURL, drop, err := postgresSchema(ctx, pg, "loomcopy_")
	if err != nil {
		return err
	}
	defer drop()
	env := append(os.Environ(), "LOOM_HOME="+filepath.Join(work, "home"), "LOOM_USER=bench")
	loomCmd := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		cmd.Stderr = os.Stderr
		return cmd
	}
	// pipe runs `loom --db from session export --all | loom --db to
	// session import -` and returns how long it took.
	pipe := func(from, to string) (time.Duration, error) {
		exp := loomCmd("--db", from, "session", "export", "--all")
		imp := loomCmd("--db", to, "session", "import", "-")
		imp.Stdout = io.Discard
		r, err := exp.StdoutPipe()
		if err != nil {
			return 0, err
		}
		imp.Stdin = r
		t0 := time.Now()
		if err := exp.Start(); err != nil {
			return 0, err
		}
		if err := imp.Start(); err != nil {
			exp.Process.Kill()
			exp.Wait()
			return 0, err
		}
		ierr := imp.Wait()
		eerr := exp.Wait()
		if eerr != nil || ierr != nil {
			return 0, fmt.Errorf("export from %s | import into %s: %v, %v", redact(from), redact(to), eerr, ierr)
		}
		return time.Since(t0), nil
	}
	export := func(db string) ([]byte, time.Duration, error) {
		t0 := time.Now()
		b, err := loomCmd("--db", db, "session", "export", "--all").Output()
		return b, time.Since(t0), err
	}
	fmt.Fprintln(os.Stderr, "copy: SQLite to PostgreSQL")
	there, err := pipe(src, pgURL)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "copy: PostgreSQL to SQLite")
	again, err := pipe(pgURL, back)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "copy: comparing exports")
	a, ta, err := export(src)
	if err != nil {
		return err
	}
	b, tb, err := export(pgURL)
	if err != nil {
		return err
	}
	c, _, err := export(back)
	if err != nil {
		return err
	}
	same := bytes.Equal(a, b) && bytes.Equal(a, c)
	fmt.Fprintf(out, "%d messages in %d sessions, %.1f MB of JSON Lines, copied with `loom session export --all | loom --db … session import -`:\n\n",
		n, n/1000, float64(len(a))/1e6)
	fmt.Fprintln(out, "| step | time | messages/s |")
	fmt.Fprintln(out, "|---|---:|---:|")
	row := func(step string, d time.Duration) {
		fmt.Fprintf(out, "| %s | %.1f s | %.0f |\n", step, d.Seconds(), float64(n)/d.Seconds())
	}
	row("SQLite → PostgreSQL (export piped into import)", there)
	row("PostgreSQL → SQLite (export piped into import)", again)
	row("export alone, SQLite", ta)
	row("export alone, PostgreSQL", tb)
	if !same {
		fmt.Fprintln(out, "\nThe exports DIFFER.")
		return fmt.Errorf("the copies export differently")
	}
	fmt.Fprintln(out, "\nThe three stores export byte-identical JSON Lines.")
	return nil
}

// workDir makes a directory for one run under dir (the caller removes
// it) and, when bin is empty, builds loom into it.
func workDir(ctx context.Context, dir, prefix, bin string) (work, loomBin string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	if work, err = os.MkdirTemp(dir, prefix); err != nil {
		return "", "", err
	}
	if bin == "" {
		bin = filepath.Join(work, "loom")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/loom")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			os.RemoveAll(work)
			return "", "", fmt.Errorf("build loom: %w", err)
		}
	}
	return work, bin, nil
}

// generateStore makes a SQLite store of n generated messages, in
// sessions of 1,000, for the user bench.
func generateStore(ctx context.Context, path string, n int) error {
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	g := newGenerator(7)
	var batch []*loom.SessionData
	for i := 0; i < n; i += 1000 {
		p := loom.Project{ID: fmt.Sprintf("%016x", i/1000%5+1), Name: fmt.Sprintf("project%d", i/1000%5), Root: fmt.Sprintf("/src/project%d", i/1000%5)}
		batch = append(batch, g.session("bench", min(1000, n-i), p))
		if len(batch) == 10 {
			if err := st.Import(ctx, batch); err != nil {
				return err
			}
			batch = nil
		}
	}
	if len(batch) > 0 {
		return st.Import(ctx, batch)
	}
	return nil
}
