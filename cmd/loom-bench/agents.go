package main

// The agents run: the import of other agents' session files (docs/import.md),
// on a corpus made by copying the real sample files of
// testdata/agent-sessions with fresh session ids until it reaches the
// size asked for. It reports the import's throughput in MB/s of source
// files beside the floor of reading them (every line decoded as JSON,
// nothing stored), then the time of a re-run over the unchanged files.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/fileedit"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/sqlite"
)

// agentsMain builds a corpus of about mb megabytes (and at least files
// session files) from the samples in src, imports it into a new store in
// dir, imports it again unchanged, and prints the figures.
func agentsMain(ctx context.Context, out io.Writer, dir, src string, mb, files int) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	work, err := os.MkdirTemp(dir, "agents-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	corpus := filepath.Join(work, "corpus")
	fmt.Fprintf(os.Stderr, "agents: copying the samples of %s to about %d MB and %d files\n", src, mb, files)
	targets, size, n, err := buildCorpus(src, corpus, int64(mb)<<20, files)
	if err != nil {
		return err
	}
	floor, err := readFloor(ctx, corpus)
	if err != nil {
		return err
	}
	st, err := sqlite.Open(ctx, filepath.Join(work, "sessions.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	im := &importer.Importer{Store: st, UserID: "bench"}
	t0 := time.Now()
	rep, err := im.Run(ctx, targets)
	if err != nil {
		return err
	}
	first := time.Since(t0)
	// The import stores the edit index of its bodies itself: the
	// catch-up (at the first loom blame) finds nothing left to read.
	t0 = time.Now()
	bodies, err := fileedit.Index(ctx, st)
	if err != nil {
		return err
	}
	index := time.Since(t0)
	var msgs, sessions, problems int
	for _, t := range rep.Tools {
		msgs += t.MessagesAdded
		sessions += t.SessionsNew
		problems += t.ProblemCount
	}
	t0 = time.Now()
	again, err := im.Run(ctx, targets)
	if err != nil {
		return err
	}
	rerun := time.Since(t0)
	unchanged := 0
	for _, t := range again.Tools {
		unchanged += t.FilesUnchanged
	}
	mbs := float64(size) / (1 << 20)
	rate := mbs / first.Seconds()
	floorRate := mbs / floor.Seconds()
	fmt.Fprintf(out, "## Import of other agents' sessions\n\n")
	fmt.Fprintf(out, "Corpus: %d files, %.1f MB (copies of the samples in %s with fresh ids): %d sessions, %d messages, %d problems.\n\n", n, mbs, src, sessions, msgs, problems)
	fmt.Fprintf(out, "| operation | budget | loom | floor (decode every line, store nothing) | ratio |\n|---|---|---|---|---|\n")
	fmt.Fprintf(out, "| import, MB/s of source files | ≥ 20 MB/s | %.1f MB/s (%s, %.0f msgs/s) | %.1f MB/s | %.2f× |\n",
		rate, first.Round(time.Millisecond), float64(msgs)/first.Seconds(), floorRate, floorRate/rate)
	fmt.Fprintf(out, "| re-run over %d unchanged files | ≤ 200 ms | %s | | |\n", unchanged, rerun.Round(time.Millisecond))
	fmt.Fprintf(out, "\nThe import stores the edit index (loom blame) of its bodies; the catch-up at the first loom blame then read %d marked bodies in %s.\n",
		bodies, index.Round(time.Millisecond))
	return nil
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// buildCorpus copies every sample session file under src into dst until
// it holds at least size bytes and files files, each copy with every
// UUID in its path and content replaced by a fresh one (the same one
// throughout the copy), so that each copy is a session of its own.
func buildCorpus(src, dst string, size int64, files int) ([]importer.Target, int64, int, error) {
	type sample struct {
		rel  string
		body []byte
	}
	var samples []sample
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		body, err := os.ReadFile(p)
		samples = append(samples, sample{rel, body})
		return err
	})
	if err != nil {
		return nil, 0, 0, err
	}
	if len(samples) == 0 {
		return nil, 0, 0, fmt.Errorf("no sample files in %s", src)
	}
	var total int64
	n := 0
	for c := 0; total < size || n < files; c++ {
		fresh := map[string]string{}
		swap := func(s string) string {
			return uuidRE.ReplaceAllStringFunc(s, func(u string) string {
				if v, ok := fresh[u]; ok {
					return v
				}
				fresh[u] = loom.NewID()
				return fresh[u]
			})
		}
		for _, s := range samples {
			// Each copy in a directory of its own, file names kept (the
			// readers tell files apart by them).
			rel := swap(s.rel)
			tool, rest, _ := strings.Cut(rel, string(filepath.Separator))
			switch tool { // where each tool keeps its files, as its reader finds them
			case "codex":
				rest = "rollout-" + rest
			case "gemini":
				rest = filepath.Join("chats", "session-"+rest)
			}
			p := filepath.Join(dst, fmt.Sprintf("copy%d", c/100), tool, fmt.Sprint(c), rest)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return nil, 0, 0, err
			}
			body := []byte(swap(string(s.body)))
			if err := os.WriteFile(p, body, 0o600); err != nil {
				return nil, 0, 0, err
			}
			total += int64(len(body))
			n++
		}
	}
	var targets []importer.Target
	for _, f := range benchFormats() {
		roots := []string{}
		for _, d := range []string{"claude-code", "codex", "gemini", "opencode"} {
			if d != f.Tool() {
				continue
			}
			matches, _ := filepath.Glob(filepath.Join(dst, "copy*", d))
			roots = append(roots, matches...)
		}
		if len(roots) > 0 {
			targets = append(targets, importer.Target{Format: f, Roots: roots, Explicit: true})
		}
	}
	return targets, total, n, nil
}

// readFloor is the least an import must do: read every line of every
// file and decode it as JSON.
func readFloor(ctx context.Context, dir string) (time.Duration, error) {
	t0 := time.Now()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return importer.Lines(ctx, bufio.NewReader(f), func(_ int, line []byte) error {
			var v map[string]any
			json.Unmarshal(line, &v)
			return nil
		}, func(int) {})
	})
	return time.Since(t0), err
}
