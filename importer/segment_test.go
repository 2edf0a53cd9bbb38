package importer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/importer/pi"
)

// withSegments makes files bigger than size be read in segments of
// size for the test.
func withSegments(t *testing.T, size int64) {
	old := importer.SegmentSize
	importer.SegmentSize = func() int64 { return size }
	t.Cleanup(func() { importer.SegmentSize = old })
}

// segmentCases are real session files, each with the segment size that
// cuts it in many segments.
type segmentCase struct {
	name string
	f    importer.Format
	src  string // a file, or a directory holding one session's bundle
	main string // the main file, under src
	seg  int64
	// gen, when set, makes the bundle instead: a file written from a
	// real one (src, main) in a directory of its own, its path returned.
	gen func(t *testing.T, seed, dir string) string
}

var segmentCases = []segmentCase{
	{"claude-code with sub-agents", claudecode.New(), "claude-code/spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl", 64 << 10, nil},
	{"claude-code, a 1 MB sub-agent file written from a real one", claudecode.New(), spotterDir, spotterMain, 64 << 10, claudeAgentFile},
	{"claude-code", claudecode.New(), "claude-code/viewer-sample-project", "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", 16 << 10, nil},
	{"codex", codex.Format{}, "codex", "vibecodingtracker-codex.jsonl", 4 << 10, nil},
	{"codex, compressed", codex.Format{}, "codex", "vibecodingtracker-codex.jsonl", 4 << 10, codexZstFile},
	{"gemini", gemini.Format{}, "gemini", "vibecodingtracker-gemini.jsonl", 4 << 10, nil},
	{"gemini, 1 MB written from the real one", gemini.Format{}, "gemini", "vibecodingtracker-gemini.jsonl", 64 << 10, geminiFile},
	{"pi, 1 MB written from a real one", pi.Format{}, "../../importer/pi/testdata", "real-0.73.1-tool.jsonl", 64 << 10, piFile},
}

// bundle is the case's bundle in a directory of its own, the path of
// its main file returned.
func (tc segmentCase) bundle(t *testing.T) string {
	t.Helper()
	if tc.gen == nil {
		return bundleOf(t, tc.src, tc.main)
	}
	seed := filepath.Join(agentSessions, tc.src, tc.main)
	if _, err := os.Stat(seed); err != nil {
		t.Skip("no real session files here")
	}
	return tc.gen(t, seed, t.TempDir())
}

// whole is what an import of the case's bundle at path, read whole,
// stores.
func (tc segmentCase) whole(t *testing.T, path string) map[string]string {
	t.Helper()
	st := importertest.Store(t)
	importertest.Import(t, st, tc.f, path)
	want := imported(t, st, tc.f.Tool())
	if len(want) == 0 {
		t.Fatal("nothing imported")
	}
	return want
}

// bundleOf copies the case's main file, with its sub-agents' files, to
// a directory of its own and returns the main file's path there.
func bundleOf(t *testing.T, src, main string) string {
	t.Helper()
	from := filepath.Join(agentSessions, src)
	if _, err := os.Stat(filepath.Join(from, main)); err != nil {
		t.Skip("no real session files here")
	}
	dir := t.TempDir()

	copyFile := func(a, b string) {
		data := importertest.ReadBytes(t, a)
		importertest.MkdirAll(t, filepath.Dir(b))
		importertest.WriteFile(t, b, data, 0o644)
	}
	copyFile(filepath.Join(from, main), filepath.Join(dir, main))
	subs := filepath.Join(from, trimExt(main))
	if fi, err := os.Stat(subs); err == nil && fi.IsDir() {
		copied := copyTree(t, subs)
		if err := os.Rename(copied, filepath.Join(dir, trimExt(main))); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, main)
}

func trimExt(name string) string { return name[:len(name)-len(filepath.Ext(name))] }

// A big file read a segment at a time makes the sessions a reading of
// the whole file makes: first import, a follow of lines appended since,
// and a reimport from its kept originals by a fixed reader once the
// file is gone.
func TestSegmentsMakeTheWholeImport(t *testing.T) {
	for _, tc := range segmentCases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.bundle(t)
			want := tc.whole(t, path)
			withSegments(t, tc.seg)

			t.Run("import", func(t *testing.T) {
				st := importertest.Store(t)
				tr := importertest.Import(t, st, tc.f, path)
				sameImport(t, imported(t, st, tc.f.Tool()), want)
				if tr.SessionsNew != len(want) || tr.SessionsGrown != 0 {
					t.Errorf("report: %d new, %d grown, want %d new", tr.SessionsNew, tr.SessionsGrown, len(want))
				}
				importertest.NothingNew(t, st, tc.f, path)
			})

			t.Run("follow", func(t *testing.T) {
				data := readSession(t, path)
				// The file as its agent had written a third of it, then
				// two thirds, then all of it, followed whole and in
				// segments.
				follow := func() map[string]string {
					st := importertest.Store(t)
					for _, part := range []int{len(data) / 3, 2 * len(data) / 3, len(data)} {
						cut := part
						if i := bytes.IndexByte(data[part-1:], '\n'); i >= 0 {
							cut = part + i
						}
						writeSession(t, path, data[:cut])
						importertest.Import(t, st, tc.f, path)
					}
					return imported(t, st, tc.f.Tool())
				}
				segmented := follow()
				withSegments(t, 1<<40)
				sameImport(t, segmented, follow())
			})

			for _, drop := range []bool{false, true} {
				name := "reimport repairs usage"
				if drop {
					name = "reimport repairs a dropped message"
				}
				t.Run(name, func(t *testing.T) {
					src := tc.bundle(t)
					st := importertest.Store(t)
					// The older reader reads whole files; the fixed one reads
					// the kept originals a segment at a time.
					importertest.Import(t, st, older{tc.f, drop}, src)
					if err := os.RemoveAll(filepath.Dir(src)); err != nil {
						t.Fatal(err)
					}
					reimport(t, st, tc.f)
					got := imported(t, st, tc.f.Tool())
					for k, w := range want {
						g := got[k]
						if drop {
							// A session made again keeps the title it had
							// in loom: the older reader's, which a dropped
							// first prompt changes (Gemini CLI's).
							g, w = untitled(t, g), untitled(t, w)
						}
						// Sources are named by the agent's file, as imported.
						if g != w {
							t.Errorf("session %s differs from a fresh import after reimport:\n got %.400s\nwant %.400s", k, g, w)
						}
					}
				})
			}
		})
	}
}

// untitled is a session as imported returns it, without its title.
func untitled(t *testing.T, s string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	delete(v, "Title")
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// interrupting is a format whose import is interrupted (its context
// cancelled) when it is asked for the segment after the first after.
type interrupting struct {
	importer.Format
	cancel context.CancelFunc
	after  int
	// asked counts the segments asked for.
	asked int
}

func (i *interrupting) ReadSegment(ctx context.Context, b importer.Bundle, seg importer.Segment) (*importer.Result, error) {
	i.asked++
	if i.asked > i.after {
		i.cancel()
	}
	return i.Format.(importer.Segmenter).ReadSegment(ctx, b, seg)
}

func (i *interrupting) Restart(line []byte) bool { return i.Format.(importer.Segmenter).Restart(line) }

// interruptingExpander is interrupting for a format with compressed
// files.
type interruptingExpander struct{ *interrupting }

func (i interruptingExpander) Compressed(name string) bool {
	return i.Format.(importer.Expander).Compressed(name)
}

func (i interruptingExpander) Expand(ctx context.Context, name string) (io.ReadCloser, error) {
	return i.Format.(importer.Expander).Expand(ctx, name)
}

// An import of a big file interrupted in the middle stops at once,
// reading no segment after the interrupt, and the next import makes
// what a whole reading makes, nothing stored twice.
func TestSegmentedImportInterrupted(t *testing.T) {
	for _, tc := range segmentCases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.bundle(t)
			want := tc.whole(t, path)
			withSegments(t, tc.seg)

			st := importertest.Store(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			in := &interrupting{Format: tc.f, cancel: cancel, after: 1}
			var f importer.Format = in
			if _, ok := tc.f.(importer.Expander); ok {
				f = interruptingExpander{in}
			}
			im := &importer.Importer{Store: st, UserID: "alice"}
			_, err := im.Run(ctx, []importer.Target{{Format: f, Roots: []string{path}, Explicit: true}})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted import: %v, want it cancelled", err)
			}
			if in.asked != in.after+1 {
				t.Errorf("%d segments asked for, want %d: the import went on after the interrupt", in.asked, in.after+1)
			}
			tr := importertest.Import(t, st, tc.f, path)
			sameImport(t, imported(t, st, tc.f.Tool()), want)
			if tr.FilesUnchanged != 0 {
				t.Errorf("the import after the interrupt found the file unchanged")
			}
		})
	}
}

// What an import reports of each session counts every message it added,
// whatever the segments the file was read in: a long append read in
// several segments is "+N" for all N, as is a new session's first
// import (what import --watch prints a line each).
func TestSegmentedImportReportsEveryMessage(t *testing.T) {
	withSegments(t, 64<<10)
	path := bundleOf(t, "claude-code/spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	data := importertest.ReadBytes(t, path)
	lines := splitLines(data)
	st := importertest.Store(t)
	check := func(what string, tr *importer.ToolReport) {
		t.Helper()
		sum := 0
		for _, c := range tr.Changes {
			sum += c.Messages
			x, err := st.Session(context.Background(), c.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if c.New && c.Messages != x.MessageCount {
				t.Errorf("%s: new session %q reported with %d messages, %d stored", what, c.Title, c.Messages, x.MessageCount)
			}
		}
		if sum != tr.MessagesAdded || tr.MessagesAdded == 0 {
			t.Errorf("%s: the sessions' changes count %d messages, the import added %d", what, sum, tr.MessagesAdded)
		}
		if len(tr.Changes) != tr.SessionsNew+tr.SessionsGrown {
			t.Errorf("%s: %d sessions changed, reported %d new and %d grown", what, len(tr.Changes), tr.SessionsNew, tr.SessionsGrown)
		}
	}
	importertest.WriteFile(t, path, joinLines(lines[:len(lines)/4]), 0o644)
	check("the first quarter, new", importertest.Import(t, st, claudecode.New(), path))
	importertest.WriteFile(t, path, data, 0o644)
	check("the rest appended", importertest.Import(t, st, claudecode.New(), path))
}
