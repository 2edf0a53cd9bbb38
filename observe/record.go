package observe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom/fileedit"
)

// maxChanged bounds the files one call's record holds (a generator that
// rewrote a whole tree is seen by its first maxChanged files).
const maxChanged = 500

// Record is what one shell call changed.
type Record struct {
	// Key is the session's key in loom (tool:source id, as an import
	// keys it), Call the agent's id of the tool call.
	Key  string    `json:"key"`
	Call string    `json:"call"`
	Tool string    `json:"tool"`
	Root string    `json:"root"`
	At   time.Time `json:"at"`
	// Command is the shell command the call ran.
	Command string   `json:"command,omitempty"`
	Files   []Change `json:"files"`
}

// Change is one file a call changed: the hashes (SHA-256) of its text
// before and after ("" where there was no file), and the lines between
// the first and the last that changed, as they were (Old) and are (New).
type Change struct {
	Path   string `json:"path"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Old    string `json:"old,omitempty"`
	New    string `json:"new,omitempty"`
}

// Diff is what changed between pre and post, the snapshots of one tree
// before and after a call: the files whose text changed, the text
// before taken from pre (its Saved) or else from git's index.
func Diff(ctx context.Context, pre, post *Snapshot) []Change {
	paths := pre.changed(post)
	slices.Sort(paths)
	if len(paths) > maxChanged {
		paths = paths[:maxChanged]
	}
	var fromIndex []string
	for _, p := range paths {
		if _, ok := pre.Saved[p]; !ok {
			if _, had := pre.Files[p]; had {
				fromIndex = append(fromIndex, p)
			}
		}
	}
	// The index's text is what a file was only if the file was the
	// index's then: the size and time the index records of it (now)
	// are the snapshot's. A file a human changed and did not stage,
	// before the index was last written, is not, and is left out: what
	// it was is not known.
	if len(fromIndex) > 0 {
		out, err := git(ctx, pre.Root, append([]string{"ls-files", "-z", "--cached", "--debug", "--"}, fromIndex...)...)
		if err != nil {
			fromIndex = nil
		}
		_, indexed := parseDebug(out)
		fromIndex = slices.DeleteFunc(fromIndex, func(p string) bool {
			in, ok := indexed[p]
			return !ok || !in.matches(pre.Files[p])
		})
	}
	index := indexTexts(ctx, pre.Root, fromIndex)
	var out []Change
	for _, p := range paths {
		before, had := pre.Saved[p]
		if !had {
			before, had = index[p]
		}
		if _, was := pre.Files[p]; was && !had {
			// Neither saved nor in the index: what it was is not known.
			continue
		}
		after, err := os.ReadFile(filepath.Join(post.Root, p))
		gone := errors.Is(err, fs.ErrNotExist)
		if err != nil && !gone || len(after) > maxText || bytes.Equal(before, after) {
			continue
		}
		c := Change{Path: p}
		if had {
			c.Before = hash(before)
		}
		if !gone {
			c.After = hash(after)
		}
		if !binary(before) && !binary(after) {
			c.Old, c.New = middle(string(before), string(after))
		}
		out = append(out, c)
	}
	return out
}

// middle are the lines of a and b from the first that differs to the
// last that differs, each with its line end.
func middle(a, b string) (string, string) {
	la, lb := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	i := 0
	for i < len(la) && i < len(lb) && la[i] == lb[i] {
		i++
	}
	j := 0
	for j < len(la)-i && j < len(lb)-i && la[len(la)-1-j] == lb[len(lb)-1-j] {
		j++
	}
	return strings.Join(la[i:len(la)-j], ""), strings.Join(lb[i:len(lb)-j], "")
}

// Added are the runs of lines the change put in the file.
func (c *Change) Added() [][]string {
	return fileedit.Inserted(fileedit.Lines(c.Old), fileedit.Lines(c.New))
}

// indexTexts are the texts git's index holds for paths (one git).
func indexTexts(ctx context.Context, root string, paths []string) map[string][]byte {
	out := map[string][]byte{}
	if len(paths) == 0 {
		return out
	}
	var in bytes.Buffer
	for _, p := range paths {
		if !strings.ContainsAny(p, "\n") {
			in.WriteString(":" + p + "\n")
		}
	}
	cmd := gitCmd(ctx, root, "cat-file", "--batch")
	cmd.Stdin = &in
	b, err := cmd.Output()
	if err != nil {
		return out
	}
	r := bufio.NewReader(bytes.NewReader(b))
	for _, p := range paths {
		head, err := r.ReadString('\n')
		if err != nil {
			break
		}
		f := strings.Fields(head)
		if len(f) != 3 {
			// "… missing": not in the index.
			continue
		}
		var n int
		fmt.Sscan(f[2], &n)
		body := make([]byte, n+1)
		if _, err := io.ReadFull(r, body); err != nil {
			break
		}
		out[p] = body[:n]
	}
	return out
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func binary(b []byte) bool { return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 }

// encode writes s as a snapshot file: the root, then a line of each
// file (path, size, time, and the length of its text when saved, -1
// when not) and the texts saved, one after the other. A hook's snapshot
// of a large tree is written and read in a few milliseconds.
func (s *Snapshot) encode(w *bufio.Writer) {
	w.WriteString(s.Root + "\x00")
	var saved []string
	var line []byte
	for p, st := range s.Files {
		n := -1
		if b, ok := s.Saved[p]; ok {
			n = len(b)
			saved = append(saved, p)
		}
		// Appended into one buffer: a string built a file was a tenth
		// of the hook's time on a tree of 10,000 files.
		line = append(append(line[:0], p...), 0)
		line = strconv.AppendInt(line, st.Size, 10)
		line = append(line, ' ')
		line = strconv.AppendInt(line, st.Mtime, 10)
		line = append(line, ' ')
		line = append(strconv.AppendInt(line, int64(n), 10), 0)
		w.Write(line)
	}
	w.WriteString("\x00")
	for _, p := range saved {
		w.Write(s.Saved[p])
	}
}

func (s *Snapshot) decode(b []byte) error {
	bad := errors.New("not a snapshot")
	root, rest, ok := bytes.Cut(b, []byte{0})
	if !ok {
		return bad
	}
	s.Root, s.Files, s.Saved = string(root), map[string]fileStat{}, map[string][]byte{}
	type text struct {
		path string
		n    int
	}
	var texts []text
	for {
		var p, meta []byte
		if p, rest, ok = bytes.Cut(rest, []byte{0}); !ok {
			return bad
		}
		if len(p) == 0 {
			break
		}
		if meta, rest, ok = bytes.Cut(rest, []byte{0}); !ok {
			return bad
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 {
			return bad
		}
		size, err1 := strconv.ParseInt(f[0], 10, 64)
		mtime, err2 := strconv.ParseInt(f[1], 10, 64)
		n, err3 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || err3 != nil {
			return bad
		}
		s.Files[string(p)] = fileStat{Size: size, Mtime: mtime}
		if n >= 0 {
			texts = append(texts, text{string(p), n})
		}
	}
	for _, t := range texts {
		if t.n > len(rest) {
			return bad
		}
		s.Saved[t.path], rest = rest[:t.n], rest[t.n:]
	}
	return nil
}

// Dir is where the records are kept under loom's data directory.
func Dir(data string) string { return filepath.Join(data, "observed") }

// logFile holds every record, one JSON object a line.
func logFile(dir string) string { return filepath.Join(dir, "calls.jsonl") }

func pendingFile(dir, key, call string) string {
	s := sha256.Sum256([]byte(key + "\x00" + call))
	return filepath.Join(dir, "pending", hex.EncodeToString(s[:12])+".snap")
}

// Before takes and keeps the snapshot of the tree dir is in, before the
// call key/call runs.
func Before(ctx context.Context, dir, key, call, cwd string) error {
	t, err := Find(ctx, cwd)
	if err != nil {
		return err
	}
	s, err := Take(ctx, t, true)
	if err != nil {
		return err
	}
	p := pendingFile(dir, key, call)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	dropStale(filepath.Dir(p))
	f, err := os.CreateTemp(filepath.Dir(p), ".snap-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<16)
	s.encode(w)
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("keep the snapshot: %w", err)
	}
	return os.Rename(f.Name(), p)
}

// staleAfter is how long a snapshot waits for its call's end: a call
// whose hook after it never ran (a call that failed, an agent killed)
// leaves one, removed by a later call's.
const staleAfter = 24 * time.Hour

func dropStale(dir string) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range es {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAfter {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// After compares the tree with the snapshot Before kept for key/call
// and appends what the call changed to the records; a call Before did
// not see (no snapshot) records nothing.
func After(ctx context.Context, dir string, r Record) error {
	p := pendingFile(dir, r.Key, r.Call)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer os.Remove(p)
	var pre Snapshot
	if err := pre.decode(b); err != nil {
		return fmt.Errorf("read the snapshot %s: %w", p, err)
	}
	post, err := Take(ctx, Tree{Root: pre.Root}, false)
	if err != nil {
		return err
	}
	r.Root, r.Files = pre.Root, Diff(ctx, &pre, post)
	if len(r.Files) == 0 {
		return nil
	}
	return appendRecord(dir, r)
}

// Read are the records kept in dir, of every work tree (none when there
// are none); a line that does not read is skipped.
func Read(dir string) ([]Record, error) {
	return Open(dir).All(), nil
}
