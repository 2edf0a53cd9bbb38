package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// syncCLIMain measures sync as a user waits for it: the real `loom sync`
// processes of two machines (stores of their own, homes of their own)
// against a hub, loom serve's handler on a loopback listener over
// SQLite. The initial sync of a store of messages messages is `loom
// sync` on the first machine (its log of the history and the push)
// then on the second (the pull and apply); one more turn is two
// messages appended on the first, then `loom sync` on each, runs times.
func syncCLIMain(ctx context.Context, out io.Writer, dir, bin string, messages, runs int) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	work, err := os.MkdirTemp(dir, "sync-cli-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if bin == "" {
		bin = filepath.Join(work, "loom")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/loom")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build loom: %w", err)
		}
	}
	h, err := startHub(ctx, filepath.Join(work, "hub.db"))
	if err != nil {
		return err
	}
	defer h.Close()
	type machine struct{ home, db string }
	m := func(name string) machine {
		return machine{home: filepath.Join(work, name), db: filepath.Join(work, name, "sessions.db")}
	}
	a, b := m("a"), m("b")
	run := func(x machine, stdin string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "LOOM_HOME="+x.home, "LOOM_DB="+x.db, "LOOM_USER=bench",
			"LOOM_SYNC_HUB="+h.URL, "LOOM_SYNC_TOKEN="+h.token)
		cmd.Stdin = strings.NewReader(stdin)
		o, err := cmd.Output()
		if err != nil {
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			return "", fmt.Errorf("loom %s: %v: %s", strings.Join(args, " "), err, stderr)
		}
		return string(o), nil
	}
	for _, x := range []machine{a, b} {
		if err := os.MkdirAll(x.home, 0o700); err != nil {
			return err
		}
	}
	st, err := sqlite.Open(ctx, a.db)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "sync-cli: generating %d messages\n", messages)
	err = fillForSync(ctx, st, messages)
	st.Close()
	if err != nil {
		return err
	}
	key, err := run(a, "", "sync", "key")
	if err != nil {
		return err
	}
	if _, err := run(b, key, "sync", "key", "--set"); err != nil {
		return err
	}

	fmt.Fprintf(os.Stderr, "sync-cli: initial sync\n")
	t0 := time.Now()
	if _, err := run(a, "", "sync"); err != nil {
		return err
	}
	first := time.Since(t0)
	t1 := time.Now()
	if _, err := run(b, "", "sync"); err != nil {
		return err
	}
	second := time.Since(t1)
	initial := first + second
	st, err = sqlite.Open(ctx, b.db)
	if err != nil {
		return err
	}
	var got int
	st.DB().QueryRow(`SELECT count(*) FROM messages`).Scan(&got)
	st.Close()
	if got != messages {
		return fmt.Errorf("initial sync: the second machine holds %d messages of %d", got, messages)
	}

	fmt.Fprintf(os.Stderr, "sync-cli: %d turns one at a time\n", runs)
	s := &loom.Session{UserID: "bench", Key: "cli:sync-bench"}
	var turns, pushes, pulls []time.Duration
	for i := range runs {
		st, err := sqlite.Open(ctx, a.db)
		if err != nil {
			return err
		}
		for _, role := range []string{loom.RoleUser, loom.RoleAssistant} {
			msg := &loom.Message{Role: role, Parts: []loom.Part{{Type: loom.PartText, Text: fmt.Sprintf("turn %d: %s", i, strings.Repeat("a sentence of a reply ", 30))}}}
			if err := st.Append(ctx, s, msg); err != nil {
				st.Close()
				return err
			}
		}
		st.Close()
		t := time.Now()
		if _, err := run(a, "", "sync"); err != nil {
			return err
		}
		push := time.Since(t)
		o, err := run(b, "", "sync")
		if err != nil {
			return err
		}
		if strings.Contains(o, "received 0 records") {
			return fmt.Errorf("turn %d: the second machine received nothing: %s", i, o)
		}
		turns, pushes, pulls = append(turns, time.Since(t)), append(pushes, push), append(pulls, time.Since(t)-push)
	}
	for _, d := range [][]time.Duration{turns, pushes, pulls} {
		slices.Sort(d)
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	fmt.Fprintf(out, "| loom sync through the command line | budget | figure | |\n|---|---|---|---|\n")
	fmt.Fprintf(out, "| initial sync of %d messages: `loom sync` on the first machine (log of the history, push), then on the second (pull, apply) | ≤ 20 s | %.1f s (%.1f s + %.1f s) | %s |\n",
		messages, initial.Seconds(), first.Seconds(), second.Seconds(), verdict(initial <= 20*time.Second))
	fmt.Fprintf(out, "| one more turn: `loom sync` on the first machine (push), then on the second (pull, apply) | median ≤ 100 ms | median %.1f ms (push %.1f ms, pull %.1f ms), min %.1f ms, max %.1f ms, %d runs | %s |\n",
		ms(pct(turns, 0.5)), ms(pct(pushes, 0.5)), ms(pct(pulls, 0.5)), ms(turns[0]), ms(turns[len(turns)-1]), len(turns), verdict(pct(turns, 0.5) <= 100*time.Millisecond))
	return nil
}
