package observe

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loomhq/loom/fileedit"
)

// The records are kept one file a work tree (rootsDir, named by a hash
// of the work tree's top directory), so that a blame reads the records
// of its repository's work trees alone, not every repository's. A work
// tree's file is bounded: past its limit (shardLimit, or twice what the
// last compaction kept), it is compacted, which keeps every record that
// may still account for a line and moves the others to the file's one
// older generation (oldSuffix, read by no blame, replaced at the next
// compaction). A record is kept when it is recent (keepRecent), or when
// a line it put in, spaces evened out as blame compares lines, is
// still in a file that any record of the work tree names, or a long
// word of it in the file it changed (a line a human changed since,
// which blame calls mixed): lines still present keep their credit,
// whatever moved them among those files.
const (
	shardLimit = 1 << 20
	keepRecent = 14 * 24 * time.Hour
	oldSuffix  = ".old"
	limitSuf   = ".limit"
	shardSuf   = ".jsonl"
)

// rootsDir holds the work trees' record files.
func rootsDir(dir string) string { return filepath.Join(dir, "roots") }

// shardName is the file of the records made in the work tree at root.
func shardName(root string) string {
	s := sha256.Sum256([]byte(filepath.Clean(root)))
	return hex.EncodeToString(s[:16]) + shardSuf
}

func shardFile(dir, root string) string { return filepath.Join(rootsDir(dir), shardName(root)) }

// Log is the records of a directory, read a work tree at a time, as a
// blame asks for them.
type Log struct {
	dir string

	mu     sync.Mutex
	listed bool
	shards map[string]bool // names of the work trees' files there are
	loaded map[string][]Record
	legacy []Record // calls.jsonl, of an older loom: read once, whole
	// read counts the bytes read (tests).
	read int64
}

// Open is the log of dir (nothing is read yet).
func Open(dir string) *Log { return &Log{dir: dir} }

func (l *Log) list() {
	if l.listed {
		return
	}
	l.listed, l.shards, l.loaded = true, map[string]bool{}, map[string][]Record{}
	if des, err := os.ReadDir(rootsDir(l.dir)); err == nil {
		for _, de := range des {
			if strings.HasSuffix(de.Name(), shardSuf) {
				l.shards[de.Name()] = true
			}
		}
	}
	if b, err := os.ReadFile(logFile(l.dir)); err == nil {
		l.read += int64(len(b))
		l.legacy = parseRecords(b)
	}
}

// BytesRead is how many bytes of records the log read.
func (l *Log) BytesRead() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.read
}

// Empty says whether there are no records at all.
func (l *Log) Empty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list()
	return len(l.shards) == 0 && len(l.legacy) == 0
}

// Under are the records of the work trees at each of dirs or above it:
// those that may have changed a file below it.
func (l *Log) Under(dirs ...string) []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list()
	var out []Record
	seen := map[string]bool{}
	for _, d := range dirs {
		d = filepath.Clean(d)
		for a := d; ; a = filepath.Dir(a) {
			if n := shardName(a); l.shards[n] && !seen[n] {
				seen[n] = true
				out = append(out, l.shard(n)...)
			}
			if p := filepath.Dir(a); p == a {
				break
			}
		}
	}
	for _, r := range l.legacy {
		for _, d := range dirs {
			if within(d, r.Root) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// All are every record.
func (l *Log) All() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list()
	out := slices.Clone(l.legacy)
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range l.shards {
			if !yield(n) {
				return
			}
		}
	}) {
		out = append(out, l.shard(n)...)
	}
	return out
}

func (l *Log) shard(name string) []Record {
	if rs, ok := l.loaded[name]; ok {
		return rs
	}
	b, _ := os.ReadFile(filepath.Join(rootsDir(l.dir), name))
	l.read += int64(len(b))
	rs := parseRecords(b)
	l.loaded[name] = rs
	return rs
}

// Version names the state of the records: each work tree's file's size
// and time (an answer kept under it stands while none changes).
func (l *Log) Version() string {
	var b strings.Builder
	for _, f := range []string{logFile(l.dir)} {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%d.%d", fi.Size(), fi.ModTime().UnixNano())
		}
	}
	des, _ := os.ReadDir(rootsDir(l.dir))
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), shardSuf) {
			continue
		}
		if fi, err := de.Info(); err == nil {
			fmt.Fprintf(&b, ",%s.%d.%d", de.Name()[:8], fi.Size(), fi.ModTime().UnixNano())
		}
	}
	s := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(s[:8])
}

// within says whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

func parseRecords(b []byte) []Record {
	var out []Record
	for _, l := range bytes.Split(b, []byte{'\n'}) {
		var r Record
		if len(l) > 0 && json.Unmarshal(l, &r) == nil && r.Key != "" {
			out = append(out, r)
		}
	}
	return out
}

// Append appends r to the records of its work tree (r.Root), as After
// does, and compacts them past their limit.
func Append(dir string, r Record) error { return appendRecord(dir, r) }

// appendRecord appends r to its work tree's file, and compacts the file
// past its limit.
func appendRecord(dir string, r Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := splitLegacy(dir); err != nil {
		return err
	}
	name := shardFile(dir, r.Root)
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	size, err := appendLocked(name, append(line, '\n'))
	if err != nil {
		return err
	}
	if size > limitOf(name) {
		return Compact(dir, r.Root, time.Now())
	}
	return nil
}

// appendLocked appends b to the file name in one write (records
// appended by two agents at once do not mix), under its lock, to the
// file that is there once the lock is taken (not one a compaction
// replaced meanwhile); size is the file's size after.
func appendLocked(name string, b []byte) (size int64, err error) {
	for range 10 {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return 0, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			return 0, err
		}
		if !sameFile(f, name) {
			f.Close()
			continue
		}
		_, err = f.Write(b)
		if fi, serr := f.Stat(); serr == nil {
			size = fi.Size()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return size, err
	}
	return 0, fmt.Errorf("append to %s: replaced again and again", name)
}

// limitOf is the size past which the file name is compacted: shardLimit,
// or twice what its last compaction kept.
func limitOf(name string) int64 {
	b, err := os.ReadFile(name + limitSuf)
	if err != nil {
		return shardLimit
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return shardLimit
	}
	return max(n, shardLimit)
}

// splitLegacy moves the records of calls.jsonl (one file for every work
// tree, as an older loom kept them) into their work trees' files, once.
func splitLegacy(dir string) error {
	b, err := os.ReadFile(logFile(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	by := map[string][]byte{}
	for _, l := range bytes.SplitAfter(b, []byte{'\n'}) {
		var r Record
		if json.Unmarshal(bytes.TrimSpace(l), &r) != nil || r.Key == "" {
			continue
		}
		if !bytes.HasSuffix(l, []byte{'\n'}) {
			l = append(l, '\n')
		}
		by[r.Root] = append(by[r.Root], l...)
	}
	if err := os.MkdirAll(rootsDir(dir), 0o700); err != nil {
		return err
	}
	for root, lines := range by {
		f, err := os.OpenFile(shardFile(dir, root), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		_, err = f.Write(lines)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return os.Remove(logFile(dir))
}

// Compact rewrites the records of the work tree at root, keeping those
// that may still account for a line (see shardLimit) and moving the
// others to its older generation.
func Compact(dir, root string, now time.Time) error {
	name := shardFile(dir, root)
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	// Closing f releases the lock, after the file is replaced: an
	// append waiting for it writes to the new file.
	defer f.Close()
	if err := lockFile(f); err != nil {
		return err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	lines := bytes.SplitAfter(b, []byte{'\n'})
	recs := make([]*Record, len(lines))
	present := map[uint64]bool{}
	words := map[string]map[string]bool{} // file → its long words
	for i, l := range lines {
		var r Record
		if json.Unmarshal(bytes.TrimSpace(l), &r) != nil || r.Key == "" {
			continue
		}
		recs[i] = &r
		for _, c := range r.Files {
			if _, ok := words[c.Path]; ok {
				continue
			}
			words[c.Path] = map[string]bool{}
			text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(c.Path)))
			if err != nil || binary(text) {
				continue
			}
			for _, t := range fileedit.Lines(string(text)) {
				if fileedit.Norm(t) != "" {
					present[fileedit.Hash(t)] = true
				}
				for _, w := range longWords(t) {
					words[c.Path][w] = true
				}
			}
		}
	}
	var keep, drop bytes.Buffer
	for i, l := range lines {
		r := recs[i]
		switch {
		case r == nil:
			// A line that does not read is dropped.
		case now.Sub(r.At) < keepRecent || stillPresent(r, present, words):
			keep.Write(l)
		default:
			drop.Write(l)
		}
	}
	if drop.Len() == 0 {
		// Nothing to move: the limit grows instead.
		return os.WriteFile(name+limitSuf, []byte(strconv.Itoa(2*keep.Len())+"\n"), 0o600)
	}
	if err := writeWhole(name+oldSuffix, drop.Bytes()); err != nil {
		return err
	}
	if err := writeWhole(name, keep.Bytes()); err != nil {
		return err
	}
	return os.WriteFile(name+limitSuf, []byte(strconv.Itoa(2*keep.Len())+"\n"), 0o600)
}

// stillPresent says whether a line r put in is among present (the
// lines of the files the records name), or may be there changed by a
// human since (a mixed line): a word of it of eight letters or digits
// or more is in the file it changed (words). Kept on a likeness this
// loose, a record is kept more often than a blame would credit it,
// never less, but for a short line a human changed.
func stillPresent(r *Record, present map[uint64]bool, words map[string]map[string]bool) bool {
	for _, c := range r.Files {
		for _, run := range c.Added() {
			for _, t := range run {
				if fileedit.Norm(t) != "" && present[fileedit.Hash(t)] {
					return true
				}
				for _, w := range longWords(t) {
					if words[c.Path][w] {
						return true
					}
				}
			}
		}
	}
	return false
}

// longWords are the words of line of eight letters, digits or
// underscores or more.
func longWords(line string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(line, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f)
	}) {
		if len(w) >= 8 {
			out = append(out, w)
		}
	}
	return out
}

// writeWhole replaces name with b by a rename: a reader reads the file
// before or after.
func writeWhole(name string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".compact-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.Write(b)
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
