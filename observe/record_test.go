package observe

import (
	"bufio"
	"bytes"
	"reflect"
	"testing"
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
