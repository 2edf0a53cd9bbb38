package blame

import (
	"context"
	bin "encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/paths"
)

// The answer kept (docs/blame.md): beside a file's line ages, the
// cache keeps the attribution loom's sessions gave its lines, so that
// a file blamed again with nothing it rests on changed reads no edit,
// no message and matches nothing: its cost no longer grows with the
// sessions that edited the file. An entry is given again only when all
// of these are as they were:
//
//   - the file: the work tree's file is HEAD's (a file with changes not
//     committed is matched each time: their lines are weighed against
//     the other files of the work tree), HEAD, and git blame's flags;
//   - the store: its edit index's version (loom.EditVersioner), which
//     every change an edit query or a root query shows sets anew — an
//     edit indexed, a part rewritten (a redaction), a fork, the trash,
//     a purge, an import, a session moved — read after the index was
//     brought up to date and before any edit was read, and the user;
//   - what the repository's roots rest on besides the store: its
//     project (its remote), whether each root other sessions recorded
//     is a work tree of this machine (and this repository's), and git's
//     index when the files it tracks told where a root was;
//   - the program: loom's executable (its size and time), since a
//     program that matches otherwise gives other answers.
//
// Agent Trace records and git notes are applied to the kept answer as
// to a new one: they are read from the repository each time. A team's
// sessions read with one's own (Sources) are matched each time.
//
// Like line-age entries, an entry is a file written whole by rename,
// with a checksum; one that does not read back is ignored and
// replaced, and pruning treats both kinds alike.

const (
	answerMagic   = "loom blame answer\n"
	answerVersion = 2
	// The entries' files keep the name they were first written with,
	// so that those of an older loom are found, replaced and pruned.
	answerSuffix = ".attr"
)

// answerEntry is a file's attribution at one state of what it rests on.
type answerEntry struct {
	// Key is everything the answer rests on that is known once the
	// file's ages are (answerKey); Store and User are the store's part,
	// known before.
	Key, Store, User string
	// Facts are what the roots rested on besides the store.
	Facts rootFacts
	Notes []string
	// Lines are the lines without their text (the file's).
	Lines []Line
}

// rootFacts are what roots learnt of the roots other sessions recorded
// from this machine rather than from the store.
type rootFacts struct {
	// ProjectID and ProjectName are the repository's project.
	ProjectID, ProjectName string
	// Roots are the recorded roots looked at, each a work tree of this
	// machine (Git) or not, and then of this repository (Same) or not.
	Roots []rootFact
	// Index names git's index file with its size and time, when the
	// files git tracks were read ("" when they were not).
	Index string
	// Trees are the roots other than the work tree that edits of the
	// file's lines were made at, each with whether it was a work tree
	// of this machine: an edit of another work tree counts only through
	// its history (worktree.go), which goes with it.
	Trees map[string]bool
}

type rootFact struct {
	Root, ProjectName string
	Git, Same         bool
}

// answerName is the entry's file of a repository's file.
func (c *ageCache) answerName(repo, path string) string {
	return strings.TrimSuffix(c.ageName(repo, path), ageSuffix) + answerSuffix
}

// answerKey is the key of an answer for rel, blamed as HEAD (head) has it
// (blob), with the store at version for user.
func answerKey(g Git, rel, head, blob, version, user string) string {
	return strings.Join([]string{strconv.Itoa(answerVersion), executable(), g.ageFlags(), g.Dir, rel, head, blob, version, user}, "\x00")
}

// executable names the running program by its path, size and time.
var executable = sync.OnceValue(func() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(p)
	if err != nil {
		return p
	}
	return fmt.Sprintf("%s %d %d", p, fi.Size(), fi.ModTime().UnixNano())
})

// loadAnswer is the kept answer of path in repo, nil when there is none or
// it does not read back.
func (c *ageCache) loadAnswer(repo, path string) *answerEntry {
	b := c.entry(repo, path, c.answerName(repo, path))
	if b == nil {
		return nil
	}
	e, err := decodeAnswer(b)
	if err != nil {
		return nil
	}
	return e
}

// saveAnswer keeps e as the answer of path in repo, whole or not at all.
func (c *ageCache) saveAnswer(repo, path string, e *answerEntry) error {
	return c.write(c.answerName(repo, path), encodeAnswer(e))
}

// encodeAnswer is e as an entry's file: the magic line, the version, the
// strings of its header, the roots' facts, the notes; a table of the
// strings its lines hold, then each line's fields as indexes into it
// (its time as nanoseconds, 0 for none); and last the CRC-32C of all
// before it.
func encodeAnswer(e *answerEntry) []byte {
	var b []byte
	str := func(s string) { b = bin.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	flag := func(v bool) {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = append(b, answerMagic...)
	b = bin.AppendUvarint(b, answerVersion)
	for _, s := range []string{e.Key, e.Store, e.User, e.Facts.ProjectID, e.Facts.ProjectName, e.Facts.Index} {
		str(s)
	}
	b = bin.AppendUvarint(b, uint64(len(e.Facts.Roots)))
	for _, f := range e.Facts.Roots {
		str(f.Root)
		str(f.ProjectName)
		flag(f.Git)
		flag(f.Same)
	}
	b = bin.AppendUvarint(b, uint64(len(e.Facts.Trees)))
	for _, root := range slices.Sorted(maps.Keys(e.Facts.Trees)) {
		str(root)
		flag(e.Facts.Trees[root])
	}
	b = bin.AppendUvarint(b, uint64(len(e.Notes)))
	for _, n := range e.Notes {
		str(n)
	}
	index := map[string]int{"": 0}
	table := []string{""}
	ref := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(table)
			index[s] = i
			table = append(table, s)
		}
		return i
	}
	fields := make([]int, 0, len(e.Lines)*lineStrings)
	for i := range e.Lines {
		for _, s := range lineFields(&e.Lines[i]) {
			fields = append(fields, ref(*s))
		}
	}
	b = bin.AppendUvarint(b, uint64(len(table)))
	for _, s := range table {
		str(s)
	}
	b = bin.AppendUvarint(b, uint64(len(e.Lines)))
	for i := range e.Lines {
		l := &e.Lines[i]
		for _, f := range fields[i*lineStrings : (i+1)*lineStrings] {
			b = bin.AppendUvarint(b, uint64(f))
		}
		b = bin.AppendVarint(b, l.Seq)
		b = bin.AppendVarint(b, int64(l.Turn))
		if l.At == nil {
			b = bin.AppendVarint(b, 0)
		} else {
			b = bin.AppendVarint(b, l.At.UnixNano())
		}
	}
	return bin.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
}

// lineStrings is how many of a Line's fields lineFields gives.
const lineStrings = 14

// lineFields are l's string fields but its text, in the entry's order.
func lineFields(l *Line) [lineStrings]*string {
	return [...]*string{&l.Kind, &l.Commit, &l.SessionID, &l.MessageID, &l.PartID, &l.Agent, &l.Model, &l.Provider, &l.Tool,
		&l.From, &l.Source, &l.Conversation, &l.Evidence, &l.Member}
}

// decodeAnswer reads an entry's file, refusing anything encodeAnswer did
// not write.
func decodeAnswer(b []byte) (*answerEntry, error) {
	r, ok := checked(b, answerMagic)
	if !ok {
		return nil, errAges
	}
	if r.uint(1<<20) != answerVersion {
		return nil, errAges
	}
	e := &answerEntry{}
	for _, s := range []*string{&e.Key, &e.Store, &e.User, &e.Facts.ProjectID, &e.Facts.ProjectName, &e.Facts.Index} {
		*s = r.str()
	}
	e.Facts.Roots = make([]rootFact, r.uint(len(r.b)))
	for i := range e.Facts.Roots {
		f := &e.Facts.Roots[i]
		f.Root, f.ProjectName, f.Git, f.Same = r.str(), r.str(), r.byte() == 1, r.byte() == 1
	}
	if n := r.uint(len(r.b)); n > 0 {
		e.Facts.Trees = make(map[string]bool, n)
		for range n {
			root := r.str()
			e.Facts.Trees[root] = r.byte() == 1
		}
	}
	e.Notes = make([]string, r.uint(len(r.b)))
	for i := range e.Notes {
		e.Notes[i] = r.str()
	}
	table := make([]string, r.uint(len(r.b)))
	for i := range table {
		table[i] = r.str()
	}
	e.Lines = make([]Line, r.uint(len(r.b)))
	// The lines of an edit share its time.
	times := map[int64]*time.Time{}
	for i := range e.Lines {
		l := &e.Lines[i]
		l.N = i + 1
		for _, s := range lineFields(l) {
			*s = table[r.uint(len(table)-1)]
		}
		l.Seq, l.Turn = r.int(), int(r.int())
		if at := r.int(); at != 0 {
			if l.At = times[at]; l.At == nil {
				t := time.Unix(0, at).UTC()
				l.At, times[at] = &t, &t
			}
		}
		if r.err != nil {
			break
		}
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errAges
	}
	return e, nil
}

// keptLines are e's lines given the file's text (lines, as the ages
// gave them), nil when they are not as many.
func (e *answerEntry) keptLines(lines []blamed) []Line {
	if len(e.Lines) != len(lines) {
		return nil
	}
	for i := range lines {
		e.Lines[i].Text = lines[i].Text
	}
	return e.Lines
}

// editVersion is the version of the store's edit index, "" when it
// names none (and no answer is kept): a team's stores read with one's
// own (Sources, which have no version) are matched each time.
func (b *Blamer) editVersion(ctx context.Context) string {
	if b.Versions == nil {
		return ""
	}
	v, err := b.Versions.EditVersion(ctx)
	if err != nil {
		return ""
	}
	return v
}

// rootsHold says whether what e's roots rested on besides the store is
// as it was: the repository's project, the recorded roots that are work
// trees of this machine (and this repository's), git's index.
func (b *Blamer) rootsHold(ctx context.Context, g Git, e *answerEntry) bool {
	p, err := paths.DetectProject(g.Dir)
	if err != nil {
		p = loom.Project{}
	}
	if p.ID != e.Facts.ProjectID || p.Name != e.Facts.ProjectName {
		return false
	}
	for _, f := range e.Facts.Roots {
		_, err := os.Stat(filepath.Join(f.Root, ".git"))
		if (err == nil) != f.Git {
			return false
		}
		if f.Git && b.sameRepo(ctx, g, loom.RecordedRoot{Root: f.Root, ProjectName: f.ProjectName}, p.Name) != f.Same {
			return false
		}
	}
	if e.Facts.Index != "" && indexStat(strings.SplitN(e.Facts.Index, "\x00", 2)[0]) != e.Facts.Index {
		return false
	}
	for root, had := range e.Facts.Trees {
		if hasGit(root) != had {
			return false
		}
	}
	return true
}

// gitIndex names git's index file of g with its size and time, "" when
// it cannot be found.
func (g Git) gitIndex(ctx context.Context) string {
	if g.gitDir != "" {
		return indexStat(filepath.Join(g.gitDir, "index"))
	}
	out, err := g.run(ctx, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return ""
	}
	return indexStat(filepath.Join(strings.TrimSpace(string(out)), "index"))
}

// indexStat is path with its size and time ("\x00"-separated), or with
// none when it is not there.
func indexStat(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return path + "\x00none"
	}
	return fmt.Sprintf("%s\x00%d %d", path, fi.Size(), fi.ModTime().UnixNano())
}
