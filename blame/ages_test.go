package blame

import (
	"context"
	bin "encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// agesCase compares the line ages the cache gives with those of a whole
// git blame, at HEAD and in the work tree, in repository r with the
// cache in dir.
type agesCase struct {
	r     *repo
	g     Git
	cache *ageCache
	ctx   context.Context
}

func newAgesCase(t *testing.T, moves bool) *agesCase {
	r := newRepo(t)
	return &agesCase{r: r, g: Git{Dir: r.dir, moves: moves}, cache: &ageCache{dir: t.TempDir()}, ctx: context.Background()}
}

// check compares, for rel, the cache's ages with a whole blame's, at
// HEAD and as the work tree has the file.
func (c *agesCase) check(rel, step string) {
	t := c.r.t
	t.Helper()
	head := strings.TrimSpace(c.r.git("rev-parse", "HEAD"))
	blob := strings.TrimSpace(c.r.git("rev-parse", "HEAD:"+rel))
	got, err := c.cache.headAges(c.ctx, c.g, rel, head, blob)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	want, err := c.g.Blame(c.ctx, head, rel)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	sameAges(t, step+" at HEAD", got, want, false)

	content, err := os.ReadFile(filepath.Join(c.r.dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	b := &Blamer{Cache: c.cache.dir, ages: c.cache}
	got, ok, err := b.workTreeAges(c.ctx, c.g, rel, content)
	if err != nil || !ok {
		t.Fatalf("%s: work tree ages: %v (%v)", step, err, ok)
	}
	want, err = c.g.Blame(c.ctx, "", rel)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	sameAges(t, step+" in the work tree", got, want, true)
}

// sameAges fails t when two blames differ in a line's commit, file,
// line there, time, boundary or (withText) text.
func sameAges(t *testing.T, what string, got, want []blamed, withText bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d lines, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		g, w := got[i], want[i]
		if !withText {
			g.Text, w.Text = "", ""
		}
		if g.Commit != w.Commit || g.Path != w.Path || g.OrigLine != w.OrigLine || !g.Time.Equal(w.Time) || g.Boundary != w.Boundary || g.Text != w.Text {
			if bad++; bad <= 5 {
				t.Errorf("%s: line %d is %.8s %s:%d %v %q, whole blame %.8s %s:%d %v %q", what, i+1,
					g.Commit, g.Path, g.OrigLine, g.Boundary, g.Text, w.Commit, w.Path, w.OrigLine, w.Boundary, w.Text)
			}
		}
	}
	if bad > 5 {
		t.Fatalf("%s: %d lines differ", what, bad)
	}
}

// randomText is a line of code-like text, with some lines alike (a
// brace, a blank) as code has them.
func randomText(rng *rand.Rand, n int) string {
	switch rng.IntN(8) {
	case 0:
		return "}"
	case 1:
		return ""
	}
	return fmt.Sprintf("\tv%d := work(%d, %q)", n, rng.IntN(1000), strings.Repeat("ab", 1+rng.IntN(6)))
}

// TestAgesAgainstWholeBlame: over a history of random changes — lines
// put in, taken out, changed, re-indented and moved within the file,
// renames, a merge whose file is the other branch's, a history
// rewritten (the cached commit no longer HEAD's ancestor), changes not
// committed — the ages the cache gives (the commits since its entry
// read from git, the rest from the entry) are those of a whole git
// blame, line for line, at HEAD and in the work tree. Without -M each
// line's age is decided by each commit's diff alone, so the two must be
// equal whatever the history.
func TestAgesAgainstWholeBlame(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			if seed > 0 && testing.Short() {
				t.Skip("one history in -short")
			}
			t.Parallel()
			c := newAgesCase(t, false)
			rng := rand.New(rand.NewPCG(seed, 60))
			n := 0
			var file []string
			for range 40 {
				n++
				file = append(file, randomText(rng, n))
			}
			rel := "src/a.go"
			write := func() { c.r.write(rel, strings.Join(file, "\n")+"\n") }
			write()
			c.r.commit("start")
			c.check(rel, "start")
			for step := range 36 {
				what := ""
				switch op := rng.IntN(10); {
				case op < 3:
					at, k := rng.IntN(len(file)+1), 1+rng.IntN(6)
					var add []string
					for range k {
						n++
						add = append(add, randomText(rng, n))
					}
					file = slices.Insert(file, at, add...)
					what = fmt.Sprintf("%d lines put in at %d", k, at)
				case op < 5 && len(file) > 10:
					at := rng.IntN(len(file) - 4)
					file = slices.Delete(file, at, at+1+rng.IntN(4))
					what = "lines taken out"
				case op < 6:
					at := rng.IntN(len(file))
					n++
					file[at] = randomText(rng, n)
					what = "a line changed"
				case op < 7:
					at := rng.IntN(len(file))
					file[at] = "    " + strings.TrimLeft(file[at], "\t ")
					what = "a line re-indented"
				default:
					at, k := rng.IntN(len(file)-6), 2+rng.IntN(5)
					block := slices.Clone(file[at : at+k])
					file = slices.Delete(file, at, at+k)
					to := rng.IntN(len(file) + 1)
					file = slices.Insert(file, to, block...)
					what = fmt.Sprintf("%d lines moved from %d to %d", k, at, to)
				}
				write()
				switch {
				case step%7 == 3:
					// Not committed.
					c.check(rel, fmt.Sprintf("step %d, %s, not committed", step, what))
					c.r.commit(what)
				case step%11 == 5:
					to := fmt.Sprintf("src/b%d.go", step)
					c.r.commit(what)
					c.r.git("mv", rel, to)
					rel = to
					c.r.commit("rename")
				case step == 20:
					// A history rewritten: the last two commits redone as one.
					c.r.git("reset", "-q", "--soft", "HEAD~2")
					c.r.commit("squashed: " + what)
				default:
					c.r.commit(what)
				}
				c.check(rel, fmt.Sprintf("step %d, %s", step, what))
			}
			// A merge that takes the other branch's file, which branched
			// before the cached commit: its lines reach the cache's
			// commit's ancestors by the other way.
			base := strings.TrimSpace(c.r.git("rev-parse", "HEAD~5"))
			c.r.git("checkout", "-q", "-b", "side", base)
			side := c.r.read(rel)
			c.r.write(rel, "// side\n"+side)
			c.r.commit("side")
			c.r.git("checkout", "-q", "main")
			c.r.write("other.txt", "main moves on\n")
			c.r.commit("main")
			c.check(rel, "before the merge")
			c.r.tick(time.Minute)
			c.r.git("merge", "-q", "--no-commit", "-s", "ours", "side")
			c.r.git("checkout", "side", "--", rel)
			c.r.git("commit", "-q", "-m", "merge side")
			c.check(rel, "after a merge that took the side's file")
			// Each check after the first found HEAD's ages since the
			// entry of the one before, but for the file renamed, the
			// history rewritten and the merge (a whole blame each), and
			// then found the entry of HEAD.
			u := c.cache.used
			t.Logf("ages: %+v", u)
			if u.whole > 6 || u.since < 30 || u.hit < 35 {
				t.Errorf("ages found %+v", u)
			}
		})
	}
}

// TestAgesWithMoves: with -M, as loom blames, over a history with a
// function moved within the file, lines moved and changed, a rename, a
// commit amended (the cached commit no longer in HEAD's history) and
// changes not committed, the cache gives the ages of a whole blame.
func TestAgesWithMoves(t *testing.T) {
	c := newAgesCase(t, true)
	fn := func(name string, n int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "func %s(input []string) (int, error) {\n", name)
		for i := range n {
			fmt.Fprintf(&b, "\tstep%d := process(input, %d, %q)\n", i, i, name)
		}
		b.WriteString("\treturn 0, nil\n}\n")
		return b.String()
	}
	rel := "pkg/calc.go"
	head := "package pkg\n\nimport \"fmt\"\n\n"
	c.r.write(rel, head+fn("Alpha", 6)+"\n"+fn("Beta", 5)+"\n"+fn("Gamma", 4))
	c.r.commit("three functions")
	c.check(rel, "first commit")
	// Gamma moved above Alpha.
	c.r.write(rel, head+fn("Gamma", 4)+"\n"+fn("Alpha", 6)+"\n"+fn("Beta", 5))
	c.r.commit("Gamma first")
	c.check(rel, "a function moved")
	// A line of Beta changed, Delta added after it; then not committed:
	// Alpha re-indented and a line put in Gamma.
	beta := strings.Replace(fn("Beta", 5), "step2 :=", "stepTwo :=", 1)
	c.r.write(rel, head+fn("Gamma", 4)+"\n"+fn("Alpha", 6)+"\n"+beta+"\n"+fn("Delta", 3))
	c.r.commit("Beta changed, Delta")
	cur := c.r.read(rel)
	c.r.write(rel, strings.Replace(strings.Replace(cur, "\tstep3 := process(input, 3, \"Alpha\")", "        step3 := process(input, 3, \"Alpha\")", 1),
		"func Gamma(input []string) (int, error) {\n", "func Gamma(input []string) (int, error) {\n\tfmt.Println(\"gamma\")\n", 1))
	c.check(rel, "changes not committed")
	c.r.commit("Alpha re-indented")
	c.check(rel, "re-indentation committed")
	// Renamed, then Beta moved to the end.
	c.r.git("mv", rel, "pkg/maths.go")
	rel = "pkg/maths.go"
	c.r.commit("rename")
	c.check(rel, "renamed")
	cur = c.r.read(rel)
	i, j := strings.Index(cur, "func Beta"), strings.Index(cur, "func Delta")
	c.r.write(rel, cur[:i]+cur[j:]+"\n"+cur[i:j])
	c.r.commit("Beta last")
	c.check(rel, "Beta moved after the rename")
	// The last commit amended: its line ages since the commit before.
	c.r.write(rel, c.r.read(rel)+"\n// amended\n")
	c.r.tick(time.Minute)
	c.r.git("commit", "-q", "-a", "--amend", "-m", "Beta last, amended")
	c.check(rel, "amended")
	u := c.cache.used
	if u.since != 4 || u.whole != 3 {
		t.Errorf("ages found %+v, want 4 since an entry and 3 whole (the first, the rename, the amend)", u)
	}
}

// TestAgesMovedBlockKeepsItsAge pins where the cache and a whole blame
// part with -M: git finds a block moved within the file only when its
// letters and digits are more than 20, counted over the lines it blames
// together, and which lines those are depends on the rest of the file.
// Two lines of 15 moved together are found moved at the commit that
// moved them; once a line is put between them, a whole blame tests each
// alone and dates both to the move. The cache keeps the age git gave
// them before, the older one; a whole blame changed its answer about
// lines nobody touched.
func TestAgesMovedBlockKeepsItsAge(t *testing.T) {
	c := newAgesCase(t, true)
	rel := "f.txt"
	c.r.write(rel, "head one\nalphabeta gamma1\ndeltaepsil zeta2\nmid1 line\nmid2 line\nmid3 line\ntail\n")
	c.r.commit("c1")
	first := strings.TrimSpace(c.r.git("rev-parse", "HEAD"))
	c.r.write(rel, "head one\nmid1 line\nmid2 line\nmid3 line\nalphabeta gamma1\ndeltaepsil zeta2\ntail\n")
	c.r.commit("c2: the block moved")
	moved := strings.TrimSpace(c.r.git("rev-parse", "HEAD"))
	c.check(rel, "moved")
	c.r.write(rel, "head one\nmid1 line\nmid2 line\nmid3 line\nalphabeta gamma1\ninserted\ndeltaepsil zeta2\ntail\n")
	c.r.commit("c3: a line between")
	head := strings.TrimSpace(c.r.git("rev-parse", "HEAD"))
	got, err := c.cache.headAges(c.ctx, c.g, rel, head, strings.TrimSpace(c.r.git("rev-parse", "HEAD:"+rel)))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := c.g.Blame(c.ctx, head, rel)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{4, 6} {
		if got[i].Commit != first || whole[i].Commit != moved {
			t.Errorf("line %d %q: cache %.8s, whole blame %.8s; want %.8s (c1) and %.8s (c2)", i+1, whole[i].Text, got[i].Commit, whole[i].Commit, first, moved)
		}
	}
	if c.cache.used.since != 1 {
		t.Errorf("ages found %+v", c.cache.used)
	}
}

// testEntry is an entry of repo /r file p at a commit of its own (k),
// with n lines from three commits.
func testEntry(k, n int) *ageEntry {
	e := &ageEntry{Flags: "-w -M", Repo: "/r", Path: "p", Commit: fmt.Sprintf("%040x", k), Blob: fmt.Sprintf("%040x", k+1000)}
	for i := range n {
		c := (i + k) % 3
		e.Lines = append(e.Lines, blamed{Commit: fmt.Sprintf("%040x", c+10), Path: fmt.Sprintf("old%d.go", c%2), OrigLine: i/2 + 1,
			Time: time.Unix(int64(1_700_000_000+c*60), 0).UTC(), Boundary: c == 2})
	}
	return e
}

func sameEntry(a, b *ageEntry) bool {
	if a.Flags != b.Flags || a.Repo != b.Repo || a.Path != b.Path || a.Commit != b.Commit || a.Blob != b.Blob || len(a.Lines) != len(b.Lines) {
		return false
	}
	for i := range a.Lines {
		x, y := a.Lines[i], b.Lines[i]
		if x.Commit != y.Commit || x.Path != y.Path || x.OrigLine != y.OrigLine || !x.Time.Equal(y.Time) || x.Boundary != y.Boundary {
			return false
		}
	}
	return true
}

// TestAgesEntryReadsBack: an entry reads back as written; one damaged
// in any way (cut short, a byte changed, empty, another file's under
// this one's name, another flag's) is ignored, and the blame that
// finds it so blames whole and writes a good one.
func TestAgesEntryReadsBack(t *testing.T) {
	e := testEntry(1, 50)
	got, err := decodeAges(encodeAges(e))
	if err != nil || !sameEntry(got, e) {
		t.Fatalf("read back %v, %v", got, err)
	}
	c := newAgesCase(t, true)
	rel := "a.txt"
	c.r.write(rel, "one\ntwo\nthree\n")
	c.r.commit("a")
	c.r.write(rel, "one\ntwo\nthree\nfour\n")
	c.r.commit("b")
	c.check(rel, "written")
	name := c.cache.ageName(c.r.dir, rel)
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	other := encodeAges(&ageEntry{Flags: "-w -M", Repo: c.r.dir, Path: "b.txt", Commit: e.Commit, Blob: e.Blob})
	for what, bad := range map[string][]byte{
		"cut short":      good[:len(good)/2],
		"a byte flipped": func() []byte { b := slices.Clone(good); b[len(b)/2] ^= 0x40; return b }(),
		"empty":          nil,
		"not an entry":   []byte("hello\n"),
		"another file's": other,
		"without -M":     encodeAges(&ageEntry{Flags: "-w", Repo: c.r.dir, Path: rel, Commit: e.Commit, Blob: e.Blob}),
	} {
		if err := os.WriteFile(name, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if c.cache.load(c.r.dir, rel, "-w -M") != nil {
			t.Errorf("%s: read as an entry", what)
		}
		whole := c.cache.used.whole
		c.check(rel, what)
		if c.cache.used.whole != whole+1 {
			t.Errorf("%s: not blamed whole: %+v", what, c.cache.used)
		}
		if c.cache.load(c.r.dir, rel, "-w -M") == nil {
			t.Errorf("%s: no good entry written after", what)
		}
	}
}

// FuzzDecodeAges: whatever an entry's file holds, with its checksum
// right or not, reading it does not fail but with errAges, and what
// reads back writes and reads back the same.
func FuzzDecodeAges(f *testing.F) {
	for _, e := range []*ageEntry{testEntry(1, 5), testEntry(2, 0)} {
		b := encodeAges(e)
		f.Add(b[:len(b)-4])
	}
	f.Add([]byte(ageMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, bin.BigEndian.AppendUint32(slices.Clone(b), crc32.Checksum(b, crc32c))} {
			e, err := decodeAges(in)
			if err != nil {
				if err != errAges {
					t.Fatalf("error %v", err)
				}
				continue
			}
			again, err := decodeAges(encodeAges(e))
			if err != nil || !sameEntry(e, again) {
				t.Fatalf("%v read back as %v (%v)", e, again, err)
			}
		}
	})
}

// TestAgesPrune: over its bounds, the directory loses its least
// recently used entries down to three quarters of them, and files half
// written by a process that died, once old.
func TestAgesPrune(t *testing.T) {
	c := &ageCache{dir: t.TempDir()}
	now := time.Now()
	for i := range 8 {
		e := testEntry(i, 100)
		e.Path = fmt.Sprint("f", i)
		if err := c.save(e); err != nil {
			t.Fatal(err)
		}
		at := now.Add(time.Duration(i-8) * time.Hour)
		os.Chtimes(c.ageName(e.Repo, e.Path), at, at)
	}
	oldTemp, newTemp := filepath.Join(c.dir, ".x.ages.1"), filepath.Join(c.dir, ".x.ages.2")
	os.WriteFile(oldTemp, []byte("half"), 0o600)
	os.WriteFile(newTemp, []byte("half"), 0o600)
	os.Chtimes(oldTemp, now.Add(-time.Hour), now.Add(-time.Hour))
	// Entry 0 read: recent again.
	if c.load("/r", "f0", "-w -M") == nil {
		t.Fatal("entry 0 not read")
	}
	if err := c.prune(now, 1<<30, 4); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for i := range 8 {
		if _, err := os.Stat(c.ageName("/r", fmt.Sprint("f", i))); err == nil {
			kept = append(kept, fmt.Sprint(i))
		}
	}
	if strings.Join(kept, " ") != "0 6 7" {
		t.Errorf("kept entries %v, want 0 6 7", kept)
	}
	if _, err := os.Stat(oldTemp); err == nil {
		t.Error("an old half-written file kept")
	}
	if _, err := os.Stat(newTemp); err != nil {
		t.Error("a file being written removed")
	}
	// By size: three entries a byte over the bound lose the least
	// recently used.
	var size int64
	for _, f := range []string{"f0", "f6", "f7"} {
		fi, _ := os.Stat(c.ageName("/r", f))
		size += fi.Size()
	}
	if err := c.prune(now, size-1, 100); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{"f0": true, "f6": false, "f7": true} {
		if _, err := os.Stat(c.ageName("/r", f)); (err == nil) != want {
			t.Errorf("entry %s kept: %v, want %v", f, err == nil, want)
		}
	}
}

// TestAgesPruneTakesTurns: a process's first new entry looks at the
// directory only when it is the processes' turn (every
// agePruneProcesses of them, or no count yet), not each time: a look
// reads every entry's size and time, a fixed cost of each first blame
// on a full cache.
func TestAgesPruneTakesTurns(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".stale.ages.1")
	plant := func() {
		os.WriteFile(stale, []byte("half"), 0o600)
		at := time.Now().Add(-time.Hour)
		os.Chtimes(stale, at, at)
	}
	looked := func() bool {
		_, err := os.Stat(stale)
		return err != nil
	}
	var looks []int
	for i := range 2*agePruneProcesses + 1 {
		plant()
		// A process of its own: a new cache, one new entry.
		c := &ageCache{dir: dir}
		e := testEntry(i, 10)
		e.Path = fmt.Sprint("f", i)
		if err := c.save(e); err != nil {
			t.Fatal(err)
		}
		if looked() {
			looks = append(looks, i)
		}
	}
	want := []int{0, agePruneProcesses, 2 * agePruneProcesses}
	if fmt.Sprint(looks) != fmt.Sprint(want) {
		t.Errorf("processes that looked: %v, want %v", looks, want)
	}
	// A count that does not read is a look.
	os.WriteFile(filepath.Join(dir, agePruneCount), []byte("x"), 0o600)
	plant()
	c := &ageCache{dir: dir}
	e := testEntry(1000, 10)
	e.Path = "g"
	if err := c.save(e); err != nil {
		t.Fatal(err)
	}
	if !looked() {
		t.Error("a damaged count did not look")
	}
}

// TestAgesConcurrentProcesses: loom processes that write and read the
// same entry at once each read a whole entry, one of those written.
func TestAgesConcurrentProcesses(t *testing.T) {
	entries := []*ageEntry{testEntry(1, 20_000), testEntry(2, 30_000)}
	readsOne := func(c *ageCache) error {
		e := c.load("/r", "p", "-w -M")
		if e == nil {
			return fmt.Errorf("no entry read")
		}
		if !sameEntry(e, entries[0]) && !sameEntry(e, entries[1]) {
			return fmt.Errorf("read an entry never written: %v", e)
		}
		return nil
	}
	if dir := os.Getenv("LOOM_TEST_AGES_WRITER"); dir != "" {
		c := &ageCache{dir: dir}
		for i := range 200 {
			if err := c.save(entries[i%2]); err != nil {
				t.Fatal(err)
			}
			if err := readsOne(c); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	c := &ageCache{dir: t.TempDir()}
	if err := c.save(entries[0]); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 3)
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAgesConcurrentProcesses$")
		cmd.Env = append(os.Environ(), "LOOM_TEST_AGES_WRITER="+c.dir)
		go func() {
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("%v: %s", err, out)
			}
			done <- err
		}()
	}
	for running := 3; running > 0; {
		select {
		case err := <-done:
			running--
			if err != nil {
				t.Error(err)
			}
		default:
			if err := readsOne(c); err != nil {
				t.Fatal(err)
			}
		}
	}
	des, _ := os.ReadDir(c.dir)
	des = slices.DeleteFunc(des, func(de os.DirEntry) bool { return de.Name() == agePruneCount })
	if len(des) != 1 {
		t.Errorf("%d files in the cache (besides the count of processes), want the entry alone", len(des))
	}
}

// TestAgesNotUsed: where the cache cannot tell a file's ages — a file
// not in HEAD, a merge under way (git blames the work tree against the
// merged branch too), a shallow clone (whose oldest lines a later fetch
// dates) — loom blames the file whole, as without the cache, and keeps
// no entry of it.
func TestAgesNotUsed(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "one\ntwo\n")
	r.commit("a")
	r.git("checkout", "-q", "-b", "side")
	r.write("a.txt", "one\nside two\n")
	r.commit("side")
	r.git("checkout", "-q", "main")
	r.write("a.txt", "one\nmain two\n")
	r.commit("main")
	r.write("new.txt", "not added\n")
	ctx := context.Background()
	g := Git{Dir: r.dir}
	b := &Blamer{Cache: t.TempDir()}
	unused := func(what, rel string) {
		t.Helper()
		content, err := os.ReadFile(filepath.Join(g.Dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := b.workTreeAges(ctx, g, rel, content); ok || err != nil {
			t.Errorf("%s: ages from the cache (%v)", what, err)
		}
		if des, _ := os.ReadDir(b.Cache); len(des) != 0 {
			t.Errorf("%s: an entry written", what)
		}
	}
	unused("a file not in HEAD", "new.txt")
	r.blame("new.txt")
	cmd := exec.Command("git", "merge", "-q", "side")
	cmd.Dir = r.dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the merge did not stop: %s", out)
	}
	unused("a merge under way", "a.txt")
	r.blame("a.txt")
	r.git("merge", "--abort")

	clone := filepath.Join(t.TempDir(), "clone")
	r.git("clone", "-q", "--depth", "1", "file://"+r.dir, clone)
	g = Git{Dir: clone}
	unused("a shallow clone", "a.txt")
}
