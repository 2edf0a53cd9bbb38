package importertest

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// FuzzFile is a reader's FuzzRead over one file: the file at sample
// seeds the corpus (empty when it cannot be read), and each input is
// written as name (relative, slash-separated) and read by FuzzFiles.
func FuzzFile(f *testing.F, fm importer.Format, sample, name string) {
	data, _ := os.ReadFile(sample)
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		FuzzFiles(t, fm, []string{name}, data)
	})
}

// FuzzFilePair is FuzzFile for a session of two files, names, each
// input a pair of contents; every seed is such a pair.
func FuzzFilePair(f *testing.F, fm importer.Format, names [2]string, seeds ...[2][]byte) {
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		FuzzFiles(t, fm, names[:], first, second)
	})
}

// FuzzStream is a reader's FuzzRead over one file read as a stream:
// each input is read by read, within ReadTimed's bounds, and what it
// returns without an error must pass check (an error is no failure:
// the input may be no such file).
func FuzzStream(f *testing.F, read func(ctx context.Context, r io.Reader) (*importer.Result, error), check func(t *testing.T, data []byte, res *importer.Result)) {
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := ReadTimed(t, func(ctx context.Context) (*importer.Result, error) {
			return read(ctx, bytes.NewReader(data))
		})
		if err != nil {
			return
		}
		check(t, data, res)
	})
}

// CheckMessagesPerLine fails t when res holds more messages, in all its
// sessions, than most allows for the lines of data: a reader must not
// make messages out of nothing.
func CheckMessagesPerLine(t testing.TB, res *importer.Result, data []byte, most func(lines int) int) {
	t.Helper()
	lines := bytes.Count(data, []byte("\n")) + 1
	total := 0
	for _, s := range res.Sessions {
		total += len(s.Messages)
	}
	if total > most(lines) {
		t.Fatalf("%d messages from %d lines", total, lines)
	}
}

// SeedFiles adds the content of each file at paths to f's corpus,
// failing when one cannot be read.
func SeedFiles(f *testing.F, paths ...string) {
	f.Helper()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// SeedStrings adds each of seeds, as bytes, to f's corpus.
func SeedStrings(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
}

// ReadTimed runs read with a deadline of 10 s and fails t when it takes
// more than 5 s; it returns what read returns.
func ReadTimed(t testing.TB, read func(ctx context.Context) (*importer.Result, error)) (*importer.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	res, err := read(ctx)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("read took %v", d)
	}
	return res, err
}

// ReadSessions is ReadAllValid, the test failing unless the result
// holds n sessions.
func ReadSessions(t testing.TB, f importer.Format, root string, n int) *importer.Result {
	t.Helper()
	res := ReadAllValid(t, f, root)
	if len(res.Sessions) != n {
		t.Fatalf("%d sessions, want %d; problems %v", len(res.Sessions), n, res.Problems)
	}
	return res
}

// CheckTexts checks that the texts of s's messages of role (Texts) are
// want, in order.
func CheckTexts(t testing.TB, s *importer.Session, role string, want ...string) {
	t.Helper()
	if got := Texts(s, role); !slices.Equal(got, want) {
		t.Errorf("session %s: %s texts %q, want %q", s.SourceID, role, got, want)
	}
}

// RefusesFile writes data as the file name of a new directory and
// checks that f refuses to read it alone: an error, one that says want
// unless want is "".
func RefusesFile(t testing.TB, f importer.Format, name, data, want string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(context.Background(), importer.Bundle{Files: []string{path}}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s of %q read: %v, want an error that says %q", name, data, err, want)
	}
}

// ReadsAsOneProblem writes data as name in a new directory and reads
// it with f: a document cut short, or one of another program, must read
// without an error as no session and one problem naming the file.
func ReadsAsOneProblem(t testing.TB, f importer.Format, name string, data []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	WriteFile(t, path, data, 0o600)
	res, err := f.Read(context.Background(), importer.Bundle{Files: []string{path}})
	if err != nil {
		t.Fatalf("%s: %v, want one problem", name, err)
	}
	if len(res.Sessions) != 0 || len(res.Problems) != 1 || res.Problems[0].File != path {
		t.Errorf("%s: sessions %d, problems %v; want none and one naming the file", name, len(res.Sessions), res.Problems)
	}
}

// ReadClean is ReadAllValid, the test failing at once unless the result
// holds n sessions and no problems.
func ReadClean(t testing.TB, f importer.Format, root string, n int) *importer.Result {
	t.Helper()
	res := ReadAllValid(t, f, root)
	if len(res.Sessions) != n || len(res.Problems) != 0 {
		t.Fatalf("%d sessions, want %d; problems %v", len(res.Sessions), n, res.Problems)
	}
	return res
}

// CheckRoles checks that the roles of s's messages (Roles) are want.
func CheckRoles(t testing.TB, s *importer.Session, want string) {
	t.Helper()
	if got := Roles(s); got != want {
		t.Errorf("session %s: roles %q, want %q", s.SourceID, got, want)
	}
}

// Getenv is the lookup of an environment that holds key, set to value,
// and nothing else: what a test hands a Format's Roots.
func Getenv(key, value string) func(string) string {
	return func(k string) string {
		if k == key {
			return value
		}
		return ""
	}
}

// CheckOneCall checks that s's messages have the roles roles and that
// s holds one tool call, completed, and every call is one ok accepts.
func CheckOneCall(t testing.TB, s *importer.Session, roles string, ok func(call loom.Part) bool) {
	t.Helper()
	tl := TallyOf(s)
	if tl.Tools[loom.ToolCompleted] != 1 || Roles(s) != roles {
		t.Errorf("roles %s, want %s; %+v", Roles(s), roles, tl)
	}
	for _, p := range Parts(s, loom.PartTool) {
		if !ok(p) {
			t.Errorf("call %s(%s) output %s", p.Name, p.Input, p.Output)
		}
	}
}

// CheckNoUsage checks that s holds no usage, for a reader of files
// that record none.
func CheckNoUsage(t testing.TB, s *importer.Session) {
	t.Helper()
	if u := SumUsage(s); u != (loom.Usage{}) {
		t.Errorf("usage %+v from files that record none", u)
	}
}

// Parts is the parts of s's messages of type typ, in order.
func Parts(s *importer.Session, typ string) []loom.Part {
	return PartsOf(s, "", typ)
}

// PartsOf is the parts of type typ of s's messages of role role (of
// every role when role is ""), in order.
func PartsOf(s *importer.Session, role, typ string) []loom.Part {
	var out []loom.Part
	for _, m := range s.Messages {
		if role != "" && m.Role != role {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == typ {
				out = append(out, p)
			}
		}
	}
	return out
}

// PartTexts is the texts of ps, in order.
func PartTexts(ps []loom.Part) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Text)
	}
	return out
}

// Calls is s's tool parts in order, each told as its name, status,
// input and output, separated by spaces.
func Calls(s *importer.Session) []string {
	var out []string
	for _, p := range Parts(s, loom.PartTool) {
		out = append(out, p.Name+" "+p.Status+" "+string(p.Input)+" "+string(p.Output))
	}
	return out
}

// ReadSession is ReadSessions (n sessions) and the session of source
// id id among them, whose messages' roles (Roles) must be roles: the
// test fails at once otherwise.
func ReadSession(t testing.TB, f importer.Format, root string, n int, id, roles string) (*importer.Result, *importer.Session) {
	t.Helper()
	res := ReadSessions(t, f, root, n)
	s := Session(t, res, id)
	if got := Roles(s); got != roles {
		t.Fatalf("session %s: roles %q, want %q", id, got, roles)
	}
	return res, s
}

// Time is the time s says in RFC 3339 (with fractions of a second if
// any); the test fails when it says none.
func Time(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// SourceIDs is the source ids of ss, in order.
func SourceIDs(ss []*importer.Session) []string {
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.SourceID)
	}
	return ids
}

// ReadBytes is the content of the file at path; the test fails when it
// cannot be read.
func ReadBytes(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// WriteFile writes data to the file at path with perm (os.WriteFile);
// the test fails when it cannot.
func WriteFile(t testing.TB, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

// MkdirAll makes the directory dir and those above it, open to all to
// read (0o755); the test fails when it cannot.
func MkdirAll(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// ReadAllFor is ReadAll of root and the session of source id id in it
// (Session).
func ReadAllFor(t testing.TB, f importer.Format, root, id string) (*importer.Result, *importer.Session) {
	t.Helper()
	res := ReadAll(t, f, root)
	return res, Session(t, res, id)
}

// ReadValidFor is ReadAllValid of root and the session of source id id
// in it (Session).
func ReadValidFor(t testing.TB, f importer.Format, root, id string) (*importer.Result, *importer.Session) {
	t.Helper()
	res := ReadAllValid(t, f, root)
	return res, Session(t, res, id)
}
