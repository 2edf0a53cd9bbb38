package observe

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// A snapshot reads back as it was written: paths with spaces and
// newlines, saved texts with NULs and none.
func TestSnapshotFile(t *testing.T) {
	s := &Snapshot{Root: "/src/app", Files: map[string]fileStat{
		"a.go": {10, 1}, "dir/with space.txt": {0, 2}, "odd\nname": {3, 3}, "bin.dat": {4, 4},
	}, Saved: map[string][]byte{"a.go": []byte("package a\n"), "dir/with space.txt": {}, "bin.dat": {0, 1, 0, 2}}}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	s.encode(w)
	w.Flush()
	var got Snapshot
	if err := got.decode(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, s) {
		t.Fatalf("read back\n%#v\nwrote\n%#v", got, *s)
	}
	if err := got.decode(b.Bytes()[:b.Len()-2]); err == nil {
		t.Error("a snapshot cut short reads")
	}
}

// middle is the changed lines alone, whole lines with their ends.
func TestMiddle(t *testing.T) {
	for _, c := range []struct{ a, b, old, new string }{
		{"x\ny\nz\n", "x\nY\nz\n", "y\n", "Y\n"},
		{"x\ny\n", "x\ny\nz\n", "", "z\n"},
		{"", "a\n", "", "a\n"},
		{"a\nb\nc\n", "a\nc\n", "b\n", ""},
		{"a\nb", "a\nb\n", "b", "b\n"},
	} {
		if o, n := middle(c.a, c.b); o != c.old || n != c.new {
			t.Errorf("middle(%q, %q) = %q, %q; want %q, %q", c.a, c.b, o, n, c.old, c.new)
		}
	}
}

// A human's change not staged, older than the index (another file was
// staged since), is not in the snapshot's texts (only the files written
// since the index are), and the index's text is not what the file was:
// the file is left out of the call's record, never recorded with the
// human's line as the call's. A file created and an ignored one changed
// are recorded, and not, as they are.
func TestDiffDirtyOlderThanIndex(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write := func(rel, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one\ntwo\n")
	write("b.txt", "b\n")
	write(".gitignore", "node_modules/\n")
	run("init", "-q")
	run("add", "-A")
	run("commit", "-qm", "start")
	write("a.txt", "one\nhuman line\ntwo\n")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, "a.txt"), old, old)
	write("b.txt", "b2\n")
	run("add", "b.txt")
	os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755)
	write("node_modules/x.js", "x\n")

	obs := t.TempDir()
	ctx := context.Background()
	if err := Before(ctx, obs, "claude-code:s", "c1", dir); err != nil {
		t.Fatal(err)
	}
	write("a.txt", "one\nhuman line\ntwo\nagent line\n")
	write("node_modules/x.js", "y\n")
	write("new.txt", "made\n")
	if err := After(ctx, obs, Record{Key: "claude-code:s", Call: "c1"}); err != nil {
		t.Fatal(err)
	}
	recs, err := Read(obs)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	got := map[string]Change{}
	for _, c := range recs[0].Files {
		got[c.Path] = c
	}
	if c, ok := got["a.txt"]; ok {
		t.Errorf("a.txt, whose text before the call is not known, recorded: %+v", c)
	}
	if c := got["new.txt"]; c.Before != "" || c.New != "made\n" {
		t.Errorf("new.txt: %+v", c)
	}
	if _, ok := got["node_modules/x.js"]; ok || len(got) != 1 {
		t.Errorf("recorded %v: an ignored file, or more than the one known", recs[0].Files)
	}

	// The same file changed by a call after one whose snapshot saw it
	// written (its text kept): the agent's own line is recorded alone.
	if err := Before(ctx, obs, "claude-code:s", "c2", dir); err != nil {
		t.Fatal(err)
	}
	write("a.txt", "one\nhuman line\ntwo\nagent line\nsecond agent line\n")
	if err := After(ctx, obs, Record{Key: "claude-code:s", Call: "c2"}); err != nil {
		t.Fatal(err)
	}
	recs, _ = Read(obs)
	if n := len(recs); n != 2 || len(recs[1].Files) != 1 || recs[1].Files[0].Old != "" || recs[1].Files[0].New != "second agent line\n" {
		t.Errorf("second call: %+v", recs[n-1])
	}
}
