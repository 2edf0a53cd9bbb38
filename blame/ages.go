package blame

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom/internal/safefile"
)

// The line-age cache: what git blame said of a file's lines at one
// commit, kept in loom's cache directory (docs/blame.md, "Line ages"),
// so that the next blame of the file asks git only about the commits
// since. A file's entry holds, for commit C, each line of the file at C
// with the commit that brought it in, the file's name there, its line
// number there and the commit's time. Blamed again at HEAD C', loom
// runs git blame on C..C' alone: the lines older than C come back as
// boundary lines of C with their number in C, and are read from the
// entry. For the lines git blame follows line by line (without -M),
// the age so found is the one a whole blame gives, since each commit's
// diff with its parent decides a line's way alone. With -M, git's answer for
// a moved block also depends on which lines around it it was blamed
// with; the entry keeps the answer git gave at C, and a whole blame at
// C' may date such a block to the commit that moved it instead (see
// TestAgesMovedBlockKeepsItsAge).
//
// The cache is derived data, for this machine's work trees only: not
// in the store, which syncs and may be shared. An entry is one file
// written whole by rename, so that concurrent loom processes read an
// entry or its successor, never half of one; a checksum covers it, and
// an entry that does not read back is ignored (and replaced). The
// directory is kept under maxAgeBytes and maxAgeFiles, the entries
// least recently used removed first (the answers kept beside them,
// answers.go, counted with them).

const (
	ageMagic   = "loom blame ages\n"
	ageVersion = 1
	// maxAgeEntry bounds one entry: a file of more lines is blamed
	// whole each time.
	maxAgeEntry = 16 << 20
	// maxAgeBytes and maxAgeFiles bound the directory; pruning keeps
	// three quarters of each. A file blamed has two entries, its ages
	// (8 bytes a line or so) and its answer (answers.go: 50 a line).
	maxAgeBytes = 256 << 20
	maxAgeFiles = 40_000
	// agePruneEvery is how many new entries a process writes between
	// looks at the directory's size.
	agePruneEvery = 256
	// agePruneProcesses is how many processes write their first new
	// entry between looks at the directory's size: each counts itself
	// in agePruneCount, and the one that reaches it looks. A look reads
	// every entry's size and time (tens of milliseconds for tens of
	// thousands of entries), which each process's first blame of a file
	// paid before; the directory may pass its bounds by what that many
	// processes write, each up to agePruneEvery entries.
	agePruneProcesses = 64
	// agePruneCount is the file that counts them (no entry's suffix, no
	// leading dot: pruning leaves it).
	agePruneCount = "prune-count"
	// agePruneWidth is the width the count is written at (padded with
	// spaces), so that each write covers the one before.
	agePruneWidth = 7
	// ageTouchAfter is how old an entry's time must be before a read
	// makes it recent again (the order pruning follows).
	ageTouchAfter = time.Hour
	// ageTempAge is how old a file half written by a process that died
	// must be before pruning removes it.
	ageTempAge = 10 * time.Minute
	// ageSuffix ends an entry's name.
	ageSuffix = ".ages"
)

// ageEntry is one file's line ages at one commit. Its lines have no
// text: that is the file's at the commit.
type ageEntry struct {
	// Flags are git blame's options the ages were found with.
	Flags  string
	Repo   string // the work tree's top-level directory
	Path   string // the file, relative to it
	Commit string
	Blob   string // the file's object at Commit
	Lines  []blamed
}

// ageCache is the directory of line-age entries.
type ageCache struct {
	dir string
	// written counts the new entries and bytes written since the last
	// look at the directory's size; looked says there was one.
	written, writtenBytes int
	looked                bool
	// used counts how headAges found ages: from an entry of HEAD (hit),
	// from git since an entry's commit (since), from a whole blame; and
	// the answers kept given again (answers.go).
	used struct{ hit, since, whole, kept int }
	// pack is the pack of the summary under way, which its entries are
	// written to (pack.go); read1 the packs read, by file name.
	pack  *pending
	read1 map[string]map[string][]byte
	// mu guards the counts, the packs, for the files a summary blames
	// at once.
	mu sync.Mutex
}

// count adds one to a count of c.used.
func (c *ageCache) count(n *int) {
	c.mu.Lock()
	*n++
	c.mu.Unlock()
}

// ageName is the entry's file of a repository's file.
func (c *ageCache) ageName(repo, path string) string {
	h := sha256.Sum256([]byte(repo + "\x00" + path))
	return filepath.Join(c.dir, hex.EncodeToString(h[:16])+ageSuffix)
}

// load is the entry of path in repo found with flags, nil when there is
// none, it is not that file's or it does not read back.
func (c *ageCache) load(repo, path, flags string) *ageEntry {
	b := c.entry(repo, path, c.ageName(repo, path))
	if b == nil {
		return nil
	}
	e, err := decodeAges(b)
	if err != nil || e.Repo != repo || e.Path != path || e.Flags != flags {
		return nil
	}
	return e
}

// read is the entry file name's bytes, nil when there is none or it is
// larger than an entry can be; an entry read is made recent again.
func (c *ageCache) read(name string) []byte {
	f, fi, err := safefile.Open(name, maxAgeEntry)
	if err != nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxAgeEntry+1))
	f.Close()
	if err != nil {
		return nil
	}
	if now := time.Now(); now.Sub(fi.ModTime()) > ageTouchAfter {
		os.Chtimes(name, now, now)
	}
	return b
}

// save writes e as its file's entry, whole or not at all. An entry
// over maxAgeEntry is not kept.
func (c *ageCache) save(e *ageEntry) error {
	return c.write(c.ageName(e.Repo, e.Path), encodeAges(e))
}

// write writes entry b as file name, whole or not at all (not at all
// when it is over maxAgeEntry), and looks at the directory's size when
// enough new entries were written since the last look (at the first
// one).
func (c *ageCache) write(name string, b []byte) error {
	if len(b) > maxAgeEntry {
		return nil
	}
	c.mu.Lock()
	if p := c.pack; p != nil {
		p.entries[filepath.Base(name)], p.changed = b, true
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	_, err := os.Lstat(name)
	isNew := errors.Is(err, os.ErrNotExist)
	// Not synced: an entry that does not read back whole after a crash
	// fails its checksum and is found again.
	if err := safefile.WriteCache(name, b, 0o600); err != nil {
		return err
	}
	if !isNew {
		return nil
	}
	c.mu.Lock()
	c.written++
	c.writtenBytes += len(b)
	first := !c.looked
	look := c.written >= agePruneEvery || c.writtenBytes >= maxAgeBytes/8
	if first || look {
		c.looked, c.written, c.writtenBytes = true, 0, 0
	}
	c.mu.Unlock()
	if first && !look {
		look = c.pruneDue()
	}
	if look {
		return c.prune(time.Now(), maxAgeBytes, maxAgeFiles)
	}
	return nil
}

// pruneDue counts this process in the directory's count of processes
// that wrote a new entry since it was last looked at, and says whether
// it is this one's turn to look (the count reached agePruneProcesses,
// or there is none that reads). The count is not locked: two processes that
// count at once may count one, which only makes the next look later by
// one.
func (c *ageCache) pruneDue() bool {
	// One open for the read and the write, and the count written over
	// itself at a fixed width: a file truncated and written again each
	// time cost each first blame's process more than the rest of its
	// cache writes (the file system freeing and taking a block).
	f, err := os.OpenFile(filepath.Join(c.dir, agePruneCount), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return true
	}
	defer f.Close()
	b := make([]byte, 64)
	k, _ := io.ReadFull(f, b)
	n, perr := strconv.Atoi(strings.TrimSpace(string(b[:k])))
	// No count (a directory new, or an older loom's) is a look too.
	due := perr != nil || n+1 >= agePruneProcesses
	if due {
		n = 0
	} else {
		n++
	}
	w := fmt.Appendf(nil, "%*d\n", agePruneWidth, n)
	if k > len(w) {
		// Longer than a count written here: what is past it would stay.
		_ = f.Truncate(0)
	}
	_, _ = f.WriteAt(w, 0)
	return due
}

// prune removes the least recently used entries while the directory
// holds more than maxBytes or maxFiles, down to three quarters of each,
// and files left half written long enough ago.
func (c *ageCache) prune(now time.Time, maxBytes int64, maxFiles int) error {
	des, err := os.ReadDir(c.dir)
	if err != nil {
		return err
	}
	type ent struct {
		name string
		size int64
		at   time.Time
	}
	var es []ent
	var total int64
	for _, de := range des {
		fi, err := de.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		name := filepath.Join(c.dir, de.Name())
		if strings.HasPrefix(de.Name(), ".") {
			if now.Sub(fi.ModTime()) > ageTempAge {
				os.Remove(name)
			}
			continue
		}
		if !strings.HasSuffix(de.Name(), ageSuffix) && !strings.HasSuffix(de.Name(), answerSuffix) && !strings.HasSuffix(de.Name(), packSuffix) {
			continue
		}
		es = append(es, ent{name, fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	if total <= maxBytes && len(es) <= maxFiles {
		return nil
	}
	slices.SortFunc(es, func(a, b ent) int { return a.at.Compare(b.at) })
	n := len(es)
	for _, e := range es {
		if total <= maxBytes*3/4 && n <= maxFiles*3/4 {
			break
		}
		if os.Remove(e.name) == nil {
			total -= e.size
			n--
		}
	}
	return nil
}

// blobID is the id git gives content as a blob, in the repository's
// hash (SHA-1, or SHA-256 when ids are 64 digits long).
func blobID(content []byte, like string) string {
	head := "blob " + strconv.Itoa(len(content)) + "\x00"
	if len(like) == 64 {
		h := sha256.New()
		h.Write([]byte(head))
		h.Write(content)
		return hex.EncodeToString(h.Sum(nil))
	}
	h := sha1.New()
	h.Write([]byte(head))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// textLines are content's lines as git blame's porcelain output gives
// them (and parsePorcelain reads them): split at line ends, a final one
// starting no line, a carriage return before a line end dropped.
func textLines(content []byte) []string {
	if len(content) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(content), "\n")
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

// probed is what one git call tells of a work tree and a file in it.
type probed struct {
	shallow bool
	gitDir  string
	head    string // the commit HEAD names
	blob    string // the file's object in it
}

// probe asks git at once whether the repository is a shallow clone,
// where its git directory is, what HEAD is, and which object rel is in
// it; ok is false when HEAD or rel in it is not there.
func (g Git) probe(ctx context.Context, rel string) (probed, bool, error) {
	out, err := g.run(ctx, "rev-parse", "--is-shallow-repository", "--absolute-git-dir", "HEAD", "HEAD:"+rel)
	if err != nil {
		if ctx.Err() != nil {
			return probed{}, false, ctx.Err()
		}
		return probed{}, false, nil
	}
	f := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(f) != 4 {
		return probed{}, false, nil
	}
	return probed{shallow: f[0] == "true", gitDir: f[1], head: f[2], blob: f[3]}, true, nil
}

// merging says whether a merge is under way in the work tree: git
// blames its file against MERGE_HEAD's commits too, which the cached
// ages do not follow.
func merging(gitDir string) bool {
	_, err := os.Lstat(filepath.Join(gitDir, "MERGE_HEAD"))
	return err == nil
}

// headAges are the line ages of rel at commit head (whose object of it
// is blob): the cached entry's when it is of head, else those since the
// entry's commit read from git and the older ones from the entry, else
// a whole blame. The cache is given the result when it changed.
func (c *ageCache) headAges(ctx context.Context, g Git, rel, head, blob string) ([]blamed, error) {
	flags := g.ageFlags()
	e := c.load(g.Dir, rel, flags)
	if e != nil && e.Commit == head && e.Blob == blob {
		c.count(&c.used.hit)
		return e.Lines, nil
	}
	var lines []blamed
	if e != nil {
		var err error
		if lines, err = c.since(ctx, g, e, head, rel); err != nil {
			return nil, err
		}
	}
	if lines == nil {
		var err error
		if lines, err = g.Blame(ctx, head, rel); err != nil {
			return nil, err
		}
		c.count(&c.used.whole)
	} else {
		c.count(&c.used.since)
	}
	ne := &ageEntry{Flags: flags, Repo: g.Dir, Path: rel, Commit: head, Blob: blob, Lines: make([]blamed, len(lines))}
	for i, l := range lines {
		l.Text = ""
		ne.Lines[i] = l
	}
	// A cache that cannot be written (a full disk, a directory not
	// ours) leaves the next blame to git: the ages found stand.
	_ = c.save(ne)
	return ne.Lines, nil
}

// since are the line ages of rel at head from git blame of
// e.Commit..head, the lines older than e.Commit read from the cache;
// nil when that cannot be known so (e's commit is gone or not an
// ancestor of head, or a line comes from a file whose entry is of
// another commit): a whole blame is needed then.
func (c *ageCache) since(ctx context.Context, g Git, e *ageEntry, head, rel string) ([]blamed, error) {
	lines, err := g.blame(ctx, e.Commit+".."+head, "--", rel)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil
	}
	if !c.fromEntries(g, lines, e) {
		return nil, nil
	}
	return lines, nil
}

// fromEntries replaces lines' boundary lines of e's commit by the ages
// their entries give them (e's, or that of the file the line was in
// there); false when one cannot be: a boundary line of another commit
// (a commit outside e's history, a root commit of a history merged
// since), or a file with no entry at e's commit.
func (c *ageCache) fromEntries(g Git, lines []blamed, e *ageEntry) bool {
	entries := map[string]*ageEntry{e.Path: e}
	for i := range lines {
		l := &lines[i]
		if !l.Boundary {
			continue
		}
		if l.Commit != e.Commit {
			return false
		}
		pe, ok := entries[l.Path]
		if !ok {
			pe = c.load(g.Dir, l.Path, e.Flags)
			if pe != nil && pe.Commit != e.Commit {
				pe = nil
			}
			entries[l.Path] = pe
		}
		if pe == nil || l.OrigLine < 1 || l.OrigLine > len(pe.Lines) {
			return false
		}
		text := l.Text
		*l = pe.Lines[l.OrigLine-1]
		l.Text = text
	}
	return true
}

// workTreeAges are the line ages of rel as the work tree has it
// (content), found through the cache; ok is false when the cache cannot
// tell them (no cache, no HEAD or rel not in it, a shallow clone, a
// merge under way): a whole blame of the work tree's file is needed.
func (b *Blamer) workTreeAges(ctx context.Context, g Git, rel string, content []byte) (lines []blamed, ok bool, err error) {
	lines, _, ok, err = b.workTreeAgesAt(ctx, g, rel, content)
	return lines, ok, err
}

// headState is the commit the work tree's file was blamed at, its
// object there, and whether the work tree's file is that object
// (clean).
type headState struct {
	head, blob string
	clean      bool
}

// workTreeAgesAt is workTreeAges with the commit the ages are of.
func (b *Blamer) workTreeAgesAt(ctx context.Context, g Git, rel string, content []byte) (lines []blamed, at headState, ok bool, err error) {
	if b.Cache == "" {
		return nil, at, false, nil
	}
	p, ok := g.openedProbe(rel)
	if !ok && g.shared != nil {
		p, ok = g.shared.probe(rel)
	}
	if !ok {
		if p, ok, err = g.probe(ctx, rel); err != nil {
			return nil, at, false, err
		}
	}
	if !ok || p.shallow || merging(p.gitDir) {
		return nil, at, false, err
	}
	at.head, at.blob = p.head, p.blob
	head, err := b.ageCache().headAges(ctx, g, rel, p.head, p.blob)
	if err != nil {
		return nil, at, false, err
	}
	if blobID(content, p.blob) == p.blob {
		if lines = withTexts(head, content); lines == nil {
			return nil, at, false, nil
		}
		at.clean = true
		return lines, at, true, nil
	}
	// The work tree's changes since HEAD, the lines before them HEAD's.
	lines, err = g.blame(ctx, "--contents", rel, p.head+"..", "--", rel)
	if err != nil {
		if ctx.Err() != nil {
			return nil, at, false, ctx.Err()
		}
		return nil, at, false, nil
	}
	e := &ageEntry{Flags: g.ageFlags(), Repo: g.Dir, Path: rel, Commit: p.head, Blob: p.blob, Lines: head}
	if !b.ages.fromEntries(g, lines, e) {
		return nil, at, false, nil
	}
	return lines, at, true, nil
}

// revAges are the line ages of rel at commit rev (content, as rev
// has it), found through the cache as HEAD's are: a commit's file does
// not change, so an entry of rev answers every later blame of it at rev
// (blame pr run again) and of HEAD once HEAD is rev. ok is false when
// the cache cannot tell them (no cache, a shallow clone): a whole blame
// is needed then.
func (b *Blamer) revAges(ctx context.Context, g Git, rel, rev string, content []byte) (lines []blamed, at headState, ok bool, err error) {
	if b.Cache == "" || g.Shallow(ctx) {
		return nil, at, false, nil
	}
	blob := blobID(content, rev)
	ages, err := b.ageCache().headAges(ctx, g, rel, rev, blob)
	if err != nil {
		return nil, at, false, err
	}
	if lines = withTexts(ages, content); lines == nil {
		return nil, at, false, nil
	}
	return lines, headState{head: rev, blob: blob, clean: true}, true, nil
}

// withTexts are an entry's line ages with the text of content's lines
// (the file the ages are of); nil when their counts differ.
func withTexts(ages []blamed, content []byte) []blamed {
	texts := textLines(content)
	if len(texts) != len(ages) {
		return nil
	}
	lines := make([]blamed, len(ages))
	for i, l := range ages {
		l.Text = texts[i]
		lines[i] = l
	}
	return lines
}

// String describes an entry, for tests' messages.
func (e *ageEntry) String() string {
	return fmt.Sprintf("%s:%s at %.8s, %d lines", e.Repo, e.Path, e.Commit, len(e.Lines))
}
