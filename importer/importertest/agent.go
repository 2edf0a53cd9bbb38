package importertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/importer"
)

// ImportsOnce imports f's sessions under root into a new store, checks
// the report says wantSessions new sessions and wantMessages messages
// added, and that a second import adds nothing.
func ImportsOnce(t testing.TB, f importer.Format, root string, wantSessions, wantMessages int) {
	t.Helper()
	st := Store(t)
	if rep := Import(t, st, f, root); rep.SessionsNew != wantSessions || rep.MessagesAdded != wantMessages {
		t.Fatalf("first import: %+v, want %d sessions and %d messages", rep, wantSessions, wantMessages)
	}
	NothingNew(t, st, f, root)
}

// CopyDir copies the directory tree src into a new temporary directory
// and returns it: fixtures a test grows.
func CopyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// Malformed writes a copy of the session file at src, with a line that
// is not JSON after its first, as file in a new directory (under the
// same relative name, rel), reads it with f, and checks that the line is
// a problem named with the file and line 2 and that the rest is read.
func Malformed(t testing.TB, f importer.Format, src, rel string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	path := filepath.Join(t.TempDir(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(first+"\n{\"broken\": \n"+rest), 0o644); err != nil {
		t.Fatal(err)
	}
	res := ReadOne(t, f, path)
	CheckValidOf(t, f.Tool(), res)
	if len(res.Problems) != 1 || res.Problems[0].File != path || res.Problems[0].Line != 2 {
		t.Errorf("problems %v, want the broken line 2 of %s", res.Problems, path)
	}
	if len(res.Sessions) == 0 || len(res.Sessions[0].Messages) == 0 {
		t.Errorf("the rest of the file was not read: %+v", res.Sessions)
	}
}

// OneBundle is the one bundle f finds at path (a file or a directory);
// the test fails unless there is exactly one.
func OneBundle(t testing.TB, f importer.Format, path string) importer.Bundle {
	t.Helper()
	bs, err := f.Bundles(context.Background(), path)
	if err != nil || len(bs) != 1 {
		t.Fatalf("bundles of %s: %v %v", path, bs, err)
	}
	return bs[0]
}

// ReadOne reads the one bundle f finds at path (OneBundle), the test
// failing unless it reads. The result is the caller's to check.
func ReadOne(t testing.TB, f importer.Format, path string) *importer.Result {
	t.Helper()
	res, err := f.Read(context.Background(), OneBundle(t, f, path))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// FuzzFiles writes data as the files names (relative, slash-separated)
// of a new directory, reads what f finds there with a deadline, and
// checks that it ends, without panic, with a valid result: what a
// reader's FuzzRead runs for each input.
func FuzzFiles(t *testing.T, f importer.Format, names []string, data ...[]byte) {
	dir := t.TempDir()
	for i, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data[i], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fuzzBundles(t, f, func(ctx context.Context) []importer.Bundle {
		bs, _ := f.Bundles(ctx, dir)
		return bs
	})
}

// FuzzOneFile writes data as name in a new directory and reads that
// file with f as a bundle of its own, with FuzzFiles' deadline and
// checks: what a reader's FuzzRead runs for each input when the file
// alone is what it reads, wherever it is.
func FuzzOneFile(t *testing.T, f importer.Format, name string, data []byte) {
	path := filepath.Join(t.TempDir(), name)
	WriteFile(t, path, data, 0o644)
	fuzzBundles(t, f, func(context.Context) []importer.Bundle {
		return []importer.Bundle{{Files: []string{path}}}
	})
}

// fuzzBundles reads with f each bundle that bundles gives, all within
// 10 s, and checks that what reads without an error is valid.
func fuzzBundles(t *testing.T, f importer.Format, bundles func(ctx context.Context) []importer.Bundle) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, b := range bundles(ctx) {
		if res, err := f.Read(ctx, b); err == nil {
			CheckValidOf(t, f.Tool(), res)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("reading took longer than 10 s")
	}
}
