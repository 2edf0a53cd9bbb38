package bigfile_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/sqlite"
)

const (
	sid  = "6b1e9d3a-4c2f-4e8b-9a7d-0f3c5e2b8a14"
	key  = "claude-code:" + sid
	user = "local"
	// perTurn is how many messages a generated turn makes: the prompt,
	// the tool call with its result, the answer.
	perTurn = 3
)

func uuid(turn, line int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", turn, line) }

var words = strings.Fields("the quick brown fox jumps over lazy dog config loader server build passes test file error value")

// text is n words, different for each seed.
func text(seed, n int) string {
	var b strings.Builder
	x := uint32(seed)*2654435761 + 1
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[x%uint32(len(words))])
	}
	return b.String()
}

// generate appends turns first, first+1, … of a Claude Code session to
// path until it holds at least size bytes, and returns the next turn's
// number. Each turn is a prompt, a Bash call, its result (about 2 KB)
// and an answer, as Claude Code writes them.
func generate(t testing.TB, path string, size int64, first int) int {
	t.Helper()
	return appendTurns(t, path, size, first, func(n int) []string {
		ts := time.Date(2026, 5, 18, 14, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format("2006-01-02T15:04:05.000Z")
		parent := "null"
		if n > 1 {
			parent = strconv.Quote(uuid(n-1, 3))
		}
		head := func(line int, parent string) string {
			return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/home/dev/p","sessionId":%q,"version":"2.1.62","gitBranch":"main","uuid":%q,"timestamp":%q,`,
				parent, sid, uuid(n, line), ts)
		}
		call := fmt.Sprintf("toolu_%08d", n)
		return []string{
			head(0, parent) + fmt.Sprintf(`"type":"user","message":{"role":"user","content":"prompt %d %s"}}`, n, text(n, 40)),
			head(1, strconv.Quote(uuid(n, 0))) + fmt.Sprintf(`"type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_a%d","type":"message","role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Bash","input":{"command":"ls %d"}}],"usage":{"input_tokens":3,"output_tokens":96,"cache_read_input_tokens":2000}}}`, n, call, n),
			head(2, strconv.Quote(uuid(n, 1))) + fmt.Sprintf(`"type":"user","message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":%q}]}}`, call, text(n+1, 300)),
			head(3, strconv.Quote(uuid(n, 2))) + fmt.Sprintf(`"type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_b%d","type":"message","role":"assistant","content":[{"type":"text","text":"done %d %s"}],"usage":{"input_tokens":3,"output_tokens":96}}}`, n, n, text(n+2, 40)),
		}
	})
}

// appendTurns appends to path the lines of turns first, first+1, …
// (turn(n)) until it holds at least size bytes, and returns the next
// turn's number.
func appendTurns(t testing.TB, path string, size int64, first int, turn func(n int) []string) int {
	t.Helper()
	importertest.MkdirAll(t, filepath.Dir(path))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	written := fi.Size()
	n := first
	for ; written < size; n++ {
		for _, l := range turn(n) {
			k, _ := w.WriteString(l + "\n")
			written += int64(k)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return n
}

// home is a LOOM_HOME with its store and a Claude Code session file.
type home struct {
	dir, db, file string
	segment       int64
}

func newHome(t *testing.T, segment int64) *home {
	dir := t.TempDir()
	return &home{dir: dir, db: filepath.Join(dir, "loom.db"), file: filepath.Join(dir, "projects", "p", sid+".jsonl"), segment: segment}
}

// bigSession is a home (segments of 256 KiB) whose session file is
// generated to size bytes, with the turns written and the file's
// information; the test is skipped under -short.
func bigSession(t *testing.T, size int64) (*home, int, os.FileInfo) {
	t.Helper()
	if testing.Short() {
		t.Skip("writes and imports a file of tens of megabytes")
	}
	h := newHome(t, 256<<10)
	turns := generate(t, h.file, size, 1)
	fi, err := os.Stat(h.file)
	if err != nil {
		t.Fatal(err)
	}
	return h, turns, fi
}

func (h *home) cmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command(clitest.LoomBinary(t), args...)
	cmd.Dir = h.dir
	cmd.Env = []string{"LOOM_HOME=" + filepath.Join(h.dir, "home"), "HOME=" + filepath.Join(h.dir, "home"), "PATH=" + os.Getenv("PATH"),
		"LOOM_DB=" + h.db}
	if h.segment > 0 {
		cmd.Env = append(cmd.Env, "LOOM_IMPORT_SEGMENT="+strconv.FormatInt(h.segment, 10))
	}
	return cmd
}

// run runs loom with args to its end and returns its peak resident
// memory in bytes and how long it took. loom is started by a small
// process, the test binary run again (TestMain): a child's peak that
// Linux reports counts the memory of the process that started it (the
// fork shares it until the exec), and this test's process holds the
// sessions it checks, hundreds of megabytes.
func (h *home) run(t *testing.T, args ...string) (int64, time.Duration) {
	t.Helper()
	cmd := h.cmd(t, args...)
	argv, err := json.Marshal(cmd.Args)
	if err != nil {
		t.Fatal(err)
	}
	rss := filepath.Join(t.TempDir(), "rss")
	cmd.Env = append(cmd.Env, spawnEnv+"="+string(argv), rssEnv+"="+rss)
	cmd.Path, cmd.Args = os.Args[0], []string{os.Args[0]}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("loom %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	took := time.Since(start)
	b, err := os.ReadFile(rss)
	if err != nil {
		t.Skip("no resource usage of a child process here")
	}
	peak, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return peak, took
}

func (h *home) open(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), h.db)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// check fails the test unless the store holds the session with
// perTurn messages per turn of the file, each once, and keeps the
// file's bytes whole.
func (h *home) check(t *testing.T, turns int) {
	t.Helper()
	ctx := context.Background()
	st := h.open(t)
	defer st.Close()
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: user, Key: key, Limit: 10})
	if err != nil || len(ss) != 1 {
		t.Fatalf("sessions %d, %v", len(ss), err)
	}
	// The messages are read a page at a time, oldest first, so that
	// the check of a session of millions of messages (LOOM_BIG_MB)
	// holds one page, not the session.
	want := perTurn * (turns - 1)
	seen := map[string]bool{}
	n := 0
	for after := int64(0); ; {
		msgs, err := st.Messages(ctx, ss[0].ID, loom.MessageQuery{After: after, Limit: 10000, Oldest: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if seen[m.ID] {
				t.Fatalf("message %s stored twice", m.ID)
			}
			seen[m.ID] = true
			if n%perTurn == 1 && (len(m.Parts) == 0 || m.Parts[0].Status != loom.ToolCompleted) {
				t.Fatalf("message %d: the tool call has no result: %+v", m.Seq, m.Parts)
			}
			n++
			after = m.Seq
		}
		if len(msgs) < 10000 {
			break
		}
	}
	if n != want || ss[0].MessageCount != want {
		t.Fatalf("%d messages (session says %d), want %d", n, ss[0].MessageCount, want)
	}
	// The originals: every byte of the file, once.
	sum := sha256.New()
	err = st.OriginalChunks(ctx, user, h.file, func(c loom.OriginalChunk) error {
		b, err := importer.DecompressOriginal(c.Data)
		if err != nil {
			return err
		}
		sum.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if f, err := os.Open(h.file); err == nil {
		file := sha256.New()
		if _, err := io.Copy(file, f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if !bytes.Equal(sum.Sum(nil), file.Sum(nil)) {
			t.Fatal("the kept original differs from the file")
		}
	}
}

// A session file's import, follow and reimport take the same memory
// whatever its size: for a file eight times as big, each costs less than
// a fixed margin more (a whole reading cost 3.8 bytes per byte of the
// file).
func TestBigImportMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and imports files of tens of megabytes")
	}
	sameMemory(t, memoryOf(t, generate, (*home).check))
}

// memoryOf is the peak resident memory, by step and size, of the
// import of files of 8 and 64 MB that write writes (as generate does),
// in 1 MB segments, of its follow once a quarter more is appended, and
// of its reimport from the originals once the files are gone; check
// checks the store after each step.
func memoryOf(t *testing.T, write func(t testing.TB, path string, size int64, first int) int, check func(h *home, t *testing.T, turns int)) map[string]map[int64]int64 {
	t.Helper()
	const mb = 1 << 20
	rss := map[string]map[int64]int64{"import": {}, "follow": {}, "reimport": {}}
	for _, size := range []int64{8 * mb, 64 * mb} {
		h := newHome(t, mb)
		turns := write(t, h.file, size, 1)
		rss["import"][size], _ = h.run(t, "session", "import", "--from", "claude-code", h.file)
		check(h, t, turns)
		turns = write(t, h.file, size+size/4, turns)
		rss["follow"][size], _ = h.run(t, "session", "import", "--from", "claude-code", h.file)
		check(h, t, turns)
		if err := os.RemoveAll(filepath.Dir(h.file)); err != nil {
			t.Fatal(err)
		}
		rss["reimport"][size], _ = h.run(t, "session", "reimport", "--from", "claude-code")
		check(h, t, turns)
	}
	return rss
}

// sameMemory fails the test when the import, follow or reimport of the
// 64 MB file (rss, peak resident memory by step and size) took more than
// a margin over the 8 MB one's, or more than the budget.
func sameMemory(t *testing.T, rss map[string]map[int64]int64) {
	t.Helper()
	const mb = 1 << 20
	// The margin holds what fills as the store grows and then stops
	// (SQLite's page caches, 16 MB for each of up to five connections,
	// and the rest: 65 → 90 MB from 8 to 64 MB, 215–224 MB at 1 GB in
	// 16 MB segments in docs/performance.md); a whole reading of 56 MB
	// more would take some 210 MB more on top of it. (Follows and
	// reimports that seemed to take up to 275 MB here were this test's
	// own memory, counted in its children's until run measured them
	// from a small process.)
	const margin, budget = 176 * mb, 500 * mb
	for _, what := range []string{"import", "follow", "reimport"} {
		small, big := rss[what][8*mb], rss[what][64*mb]
		t.Logf("%s: peak resident %d MB for 8 MB, %d MB for 64 MB", what, small>>20, big>>20)
		if big > small+margin {
			t.Errorf("%s: 64 MB took %d MB, 8 MB %d MB: memory grows with the file", what, big>>20, small>>20)
		}
		if big > budget {
			t.Errorf("%s: 64 MB took %d MB, over the budget of %d MB", what, big>>20, budget>>20)
		}
	}
}

// running is a loom command started and not waited for.
type running struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan error
}

// start starts loom with args.
func (h *home) start(t *testing.T, args ...string) *running {
	t.Helper()
	r := &running{cmd: h.cmd(t, args...), out: &bytes.Buffer{}, done: make(chan error, 1)}
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	return r
}

// partWritten waits until st records the import's file as read up to
// more than nothing and less than size bytes; it fails the test when
// the import ends first.
func (r *running) partWritten(t *testing.T, st *sqlite.Store, size int64) {
	t.Helper()
	for {
		select {
		case err := <-r.done:
			t.Fatalf("the import ended before it was seen half done (%v):\n%s", err, r.out.String())
		case <-time.After(5 * time.Millisecond):
		}
		recs, err := st.ImportedFiles(context.Background(), user, "claude-code")
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 && recs[0].Size > 0 && recs[0].Size < size {
			return
		}
	}
}

// wait waits for the command's end, which must be a success, and
// returns its output.
func (r *running) wait(t *testing.T) string {
	t.Helper()
	if err := <-r.done; err != nil {
		t.Fatalf("loom %s: %v\n%s", strings.Join(r.cmd.Args[1:], " "), err, r.out.String())
	}
	return r.out.String()
}

// An import killed (kill -9) while it writes a big file loses nothing
// and stores nothing twice: the next import goes on from the last
// segment written, and keeps the file's original whole. A copy of the
// store (its file copied elsewhere) reimports from its originals.
func TestBigImportKilled(t *testing.T) {
	h, turns, fi := bigSession(t, 16<<20)
	st := h.open(t) // the store exists before the import starts
	imp := h.start(t, "session", "import", "--from", "claude-code", h.file)
	// Kill it once it has written a part of the file, and not all.
	imp.partWritten(t, st, fi.Size())
	if err := imp.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-imp.done
	st.Close()
	h.run(t, "session", "import", "--from", "claude-code", h.file)
	h.check(t, turns)

	// The store's file copied elsewhere, the session file gone: the
	// copy reimports from its originals.
	cp := newHome(t, h.segment)
	cp.file = h.file
	for _, ext := range []string{"", "-wal"} {
		data, err := os.ReadFile(h.db + ext)
		if os.IsNotExist(err) && ext != "" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		importertest.WriteFile(t, cp.db+ext, data, 0o600)
	}
	if err := os.Remove(h.file); err != nil {
		t.Fatal(err)
	}
	cp.run(t, "session", "reimport", "--from", "claude-code")
	cp.check(t, turns)
}

// With LOOM_BIG_MB=N: one import of a generated Claude Code file of N
// MB with the default segment size, a follow of N/10 MB appended, and a
// reimport from the originals, each with its time and peak resident
// memory (docs/performance.md). The file goes under $LOOM_BIG_DIR when
// set (it needs N MB and about as much again for the store).
func TestBigMeasure(t *testing.T) {
	n, _ := strconv.ParseInt(os.Getenv("LOOM_BIG_MB"), 10, 64)
	if n <= 0 {
		t.Skip("LOOM_BIG_MB is not set")
	}
	h := newHome(t, 0)
	if dir := os.Getenv("LOOM_BIG_DIR"); dir != "" {
		d, err := os.MkdirTemp(dir, "loom-big-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		h.db, h.file = filepath.Join(d, "loom.db"), filepath.Join(d, "projects", "p", sid+".jsonl")
	}
	start := time.Now()
	turns := generate(t, h.file, n<<20, 1)
	t.Logf("generated %d MB (%d turns) in %s", n, turns-1, time.Since(start).Round(time.Second))
	report := func(what string, size int64, rss int64, took time.Duration) {
		t.Logf("%s of %d MB: %s, peak resident %d MB, %.1f MB/s", what, size>>20, took.Round(time.Second), rss>>20, float64(size>>20)/took.Seconds())
	}
	rss, took := h.run(t, "session", "import", "--from", "claude-code", h.file)
	report("import", n<<20, rss, took)
	before := n << 20
	turns = generate(t, h.file, before+n<<20/10, turns)
	rss, took = h.run(t, "session", "import", "--from", "claude-code", h.file)
	fi, _ := os.Stat(h.file)
	report("follow", fi.Size()-before, rss, took)
	rss, took = h.run(t, "session", "reimport", "--from", "claude-code")
	report("reimport", fi.Size(), rss, took)
	if db, err := os.Stat(h.db); err == nil {
		t.Logf("store %d MB", db.Size()>>20)
	}
	h.check(t, turns)
}

// Two imports of one big file at once (a hook's import and a watcher's,
// or two `loom session import` runs), one started while the other is in
// the middle of the file and after the agent appended to it: nothing is
// stored twice and nothing is lost, and both end well. Each takes the
// file's source lock for its whole reading, so the second waits and
// then reads on from where the first's record ends.
func TestBigImportTwiceAtOnce(t *testing.T) {
	h, turns, fi := bigSession(t, 12<<20)
	st := h.open(t) // the store exists before the imports start
	defer st.Close()
	first := h.start(t, "session", "import", "--from", "claude-code", h.file)
	// The second starts once the first has written a part of the file.
	first.partWritten(t, st, fi.Size())
	turns = generate(t, h.file, fi.Size()+2<<20, turns)
	second := h.start(t, "session", "import", "--from", "claude-code", h.file)
	out1, out2 := first.wait(t), second.wait(t)
	// Between them they added each message once: the second read on
	// from where the first ended.
	if a, b := added(t, out1), added(t, out2); a+b != perTurn*(turns-1) {
		t.Errorf("the imports added %d and %d messages, want %d in all:\n%s\n%s", a, b, perTurn*(turns-1), out1, out2)
	}
	h.check(t, turns)
	// And a third finds nothing new.
	h.run(t, "session", "import", "--from", "claude-code", h.file)
	h.check(t, turns)
}

// added is the number of messages an import's report says it added.
func added(t *testing.T, report string) int {
	t.Helper()
	for _, l := range strings.Split(report, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "messages" && f[2] == "added" {
			n, err := strconv.Atoi(strings.ReplaceAll(f[1], ",", ""))
			if err != nil {
				t.Fatalf("report: %q: %v", l, err)
			}
			return n
		}
	}
	t.Fatalf("no messages added in the report:\n%s", report)
	return 0
}
