package importer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/export"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/chatgptcli"
	"github.com/loomhq/loom/importer/chatgptpy"
	"github.com/loomhq/loom/importer/chatgpttui"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/erosolar"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/importertest"
	"github.com/loomhq/loom/importer/mcphost"
	"github.com/loomhq/loom/importer/minisweagent"
	"github.com/loomhq/loom/importer/nanobot"
	"github.com/loomhq/loom/importer/opencode"
	"github.com/loomhq/loom/importer/opencodego"
	"github.com/loomhq/loom/importer/openinterpreter"
	"github.com/loomhq/loom/importer/shellgpt"
	"github.com/loomhq/loom/importer/traeagent"
	"github.com/loomhq/loom/importer/variants"
	"github.com/loomhq/loom/sqlite"
)

// agentSessions are the real session files (testdata/agent-sessions/SOURCES.md).
const agentSessions = "../testdata/agent-sessions"

// older is a reader with a defect fixed since: it drops every reply's
// usage and, with dropMessage, the second message of every session, as
// a reader that misread a line would. Its Tool is the wrapped reader's,
// so that what it imported is what the fixed reader reads again.
type older struct {
	importer.Format
	dropMessage bool
}

func (o older) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	res, err := o.Format.Read(ctx, b)
	if err != nil {
		return nil, err
	}
	for _, s := range res.Sessions {
		for _, m := range s.Messages {
			m.Usage = loom.Usage{}
		}
		if o.dropMessage && len(s.Messages) > 2 {
			s.Messages = slices.Delete(s.Messages, 1, 2)
		}
	}
	return res, nil
}

// copyTree copies the files under src to a new directory and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func reimport(t *testing.T, st loom.Engine, f importer.Format, ids ...string) *importer.ToolReport {
	t.Helper()
	ctx := context.Background()
	bundles, err := importer.KeptBundles(ctx, st, "alice", f.Tool(), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(bundles) == 0 {
		t.Fatal("no kept originals")
	}
	im := &importer.Importer{Store: st, UserID: "alice"}
	tr, err := im.Reimport(ctx, f, bundles)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// imported is what a store holds of tool's sessions, by key: each
// session's kind, parent's key, title, directory, start and messages as
// JSON, the fields a reader decides (importedWithModel adds the
// session's model).
func imported(t *testing.T, st loom.Store, tool string) map[string]string {
	t.Helper()
	ctx := context.Background()
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice", Surface: tool})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, s := range ss {
		keys[s.ID] = s.Key
	}
	out := map[string]string{}
	for _, s := range ss {
		if s.Source == nil {
			continue
		}
		msgs, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
		if err != nil {
			t.Fatal(err)
		}
		type msg struct {
			ID, Role, Model string
			Seq             int64
			Parts           []loom.Part
			Usage           loom.Usage
			At              string
		}
		var ms []msg
		for _, m := range msgs {
			parts := slices.Clone(m.Parts)
			for i := range parts {
				if parts[i].SessionID != "" {
					parts[i].SessionID = keys[parts[i].SessionID]
				}
			}
			ms = append(ms, msg{m.ID, string(m.Role), m.Model, m.Seq, parts, m.Usage, m.CreatedAt.String()})
		}
		b, err := json.Marshal(struct {
			Kind, Parent, Title string
			Cwd, Created        string
			Usage               loom.Usage
			Messages            []msg
		}{s.Kind, keys[s.ParentID], s.Title, s.Cwd, s.CreatedAt.String(), s.Usage, ms})
		if err != nil {
			t.Fatal(err)
		}
		out[s.Key] = string(b)
	}
	return out
}

func sameImport(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d sessions, want %d", len(got), len(want))
	}
	for k, w := range want {
		if g := got[k]; g != w {
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			from := max(0, i-300)
			t.Errorf("session %s differs from a fresh import at %d:\n got %.600s\nwant %.600s", k, i, g[from:], w[from:])
		}
	}
}

// A reader defect fixed after the agent deleted its file reaches the
// session: reimport reads the kept originals with the fixed reader, and
// the session equals a fresh import of the file by it, while its title
// set in loom and a fork made of it stay.
func TestReimportRepairsAfterTheFileIsGone(t *testing.T) {
	for _, drop := range []bool{false, true} {
		name := "usage dropped"
		if drop {
			name = "a message dropped"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			src := filepath.Join(agentSessions, "claude-code/spotter/tool_heavy.jsonl")
			dir := t.TempDir()
			path := filepath.Join(dir, "tool_heavy.jsonl")
			data, err := os.ReadFile(src)
			if err != nil {
				t.Skip("no real session files here")
			}
			importertest.WriteFile(t, path, data, 0o644)
			fixed := claudecode.New()
			st := importertest.Store(t)
			importertest.Import(t, st, older{fixed, drop}, path)
			ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice"})
			if err != nil || len(ss) != 1 {
				t.Fatalf("sessions %v, %v", len(ss), err)
			}
			x := ss[0]
			if x.Usage.OutputTokens != 0 {
				t.Fatal("the older reader kept usage")
			}
			title := "renamed in loom"
			if _, err := st.UpdateSession(ctx, x.ID, loom.SessionUpdate{Title: &title}); err != nil {
				t.Fatal(err)
			}
			fork, err := st.Fork(ctx, x.ID, loom.ForkOptions{Turn: 1, Title: "my branch"})
			if err != nil {
				t.Fatal(err)
			}
			forkMsgs, err := st.Messages(ctx, fork.ID, loom.MessageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}

			tr := reimport(t, st, fixed, x.ID)
			if drop && tr.SessionsRepaired != 1 {
				t.Errorf("repaired %d sessions, want 1 made again", tr.SessionsRepaired)
			}

			// A fresh import of the file by the fixed reader.
			importertest.WriteFile(t, path, data, 0o644)
			fresh := importertest.Store(t)
			importertest.Import(t, fresh, fixed, path)
			got := imported(t, st, fixed.Tool())
			// The title is the one set in loom; the rest is the reading.
			y, err := st.Session(ctx, x.ID)
			if err != nil {
				t.Fatal(err)
			}
			if y.Title != title {
				t.Errorf("title %q, want the one set in loom", y.Title)
			}
			if y.Usage.OutputTokens == 0 {
				t.Error("the session has no usage after reimport")
			}
			fs, err := fresh.Sessions(ctx, loom.SessionFilter{UserID: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			if err := retitle(ctx, fresh, fs[0].ID, title); err != nil {
				t.Fatal(err)
			}
			want := imported(t, fresh, fixed.Tool())
			sameImport(t, got, want)
			// The fork made in loom is as it was.
			f2, err := st.Session(ctx, fork.ID)
			if err != nil || f2.ParentID != x.ID || f2.Title != "my branch" {
				t.Fatalf("fork after reimport: %+v, %v", f2, err)
			}
			after, err := st.Messages(ctx, fork.ID, loom.MessageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(forkMsgs) {
				t.Errorf("fork holds %d messages, had %d", len(after), len(forkMsgs))
			}
		})
	}
}

func retitle(ctx context.Context, st loom.Store, id, title string) error {
	_, err := st.UpdateSession(ctx, id, loom.SessionUpdate{Title: &title})
	return err
}

// For every agent of the real session files: import, the files deleted,
// reimport: the store equals a fresh import of the files, and a second
// import of the same files adds no originals.
func TestReimportEqualsFreshImport(t *testing.T) {
	for _, c := range []struct {
		dir string
		f   importer.Format
	}{
		{"claude-code", claudecode.New()},
		{"codex", codex.Format{}},
		{"gemini", gemini.Format{}},
		{"opencode", opencode.Format{}},
		// Files the programs' own code wrote, run from their sources.
		{"minisweagent", minisweagent.Format{}},
		{"traeagent", traeagent.Format{}},
		{"shellgpt", shellgpt.Format{}},
		{"openinterpreter", openinterpreter.Format{}},
		{"chatgptpy", chatgptpy.Format{}},
		// The database NanoCode, a fork of opencode, wrote.
		{"nanocode", variants.NanoCode},
		{"nanobot", nanobot.Format{}},
		// Files the real programs wrote, built from the Go module proxy.
		{"chatgptcli", chatgptcli.Format{}},
		{"mcphost", mcphost.Format{}},
		{"chatgpttui", chatgpttui.Format{}},
		{"opencodego", opencodego.Format{}},
		// Files the real program, from npm, wrote.
		{"erosolar", erosolar.Format{}},
	} {
		t.Run(c.dir, func(t *testing.T) {
			ctx := context.Background()
			src := filepath.Join(agentSessions, c.dir)
			switch c.dir {
			case "opencode":
				// A real opencode.db: a database of sessions, kept whole.
				src = "opencode/testdata"
			case "minisweagent", "traeagent", "openinterpreter", "chatgptpy":
				src = c.dir + "/testdata/real"
			case "shellgpt":
				// Its chat cache, found in testdata as in the directory
				// that holds it.
				src = "shellgpt/testdata/chat_cache"
			case "nanocode":
				src = "variants/testdata"
			case "nanobot":
				src = "nanobot/testdata/real"
			case "chatgptcli", "mcphost", "opencodego", "chatgpttui", "erosolar":
				src = c.dir + "/testdata/real"
			}
			root := copyTree(t, src)
			// Each file named, as the copies are not where or as each
			// agent names its own.
			var roots []string
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && (c.dir != "opencode" || filepath.Base(p) == "real-1.18.33.db") {
					roots = append(roots, p)
				}
				return err
			})
			if c.dir == "claude-code" {
				roots = []string{root}
			}
			st := importertest.Store(t)
			importertest.Import(t, st, c.f, roots...)
			kept, err := st.OriginalFiles(ctx, "alice", c.f.Tool())
			if err != nil || len(kept) == 0 {
				t.Fatalf("kept %d originals, %v", len(kept), err)
			}
			// An unchanged file adds nothing.
			for _, k := range kept {
				os.Chtimes(k.Path, k.ModTime.Add(1e9), k.ModTime.Add(1e9))
			}
			importertest.Import(t, st, c.f, roots...)
			again, err := st.OriginalFiles(ctx, "alice", c.f.Tool())
			if err != nil {
				t.Fatal(err)
			}
			for i := range again {
				if again[i].Chunks != kept[i].Chunks || again[i].Size != kept[i].Size {
					t.Errorf("%s: %d chunks of %d bytes after an unchanged import, had %d of %d", again[i].Path, again[i].Chunks, again[i].Size, kept[i].Chunks, kept[i].Size)
				}
			}
			if c.dir == "chatgpttui" || c.dir == "shellgpt" {
				// Its messages' times are the file's: the fresh import
				// reads the file as it was when first imported.
				for _, k := range kept {
					os.Chtimes(k.Path, k.ModTime, k.ModTime)
				}
			}
			fresh := importertest.Store(t)
			importertest.Import(t, fresh, c.f, roots...)
			if err := os.RemoveAll(root); err != nil {
				t.Fatal(err)
			}
			tr := reimport(t, st, c.f)
			if tr.SessionsRepaired != 0 || tr.MessagesAdded != 0 || tr.ProblemCount != 0 {
				t.Errorf("reimport with the same reader changed something: %+v", tr)
			}
			sameImport(t, imported(t, st, c.f.Tool()), imported(t, fresh, c.f.Tool()))
		})
	}
}

// A file that grows keeps only its new bytes; one rewritten is kept
// again whole; what is kept reads back as the file's bytes.
func TestOriginalsIncremental(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(agentSessions, "claude-code/spotter/tool_heavy.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Skip("no real session files here")
	}
	lines := splitLines(data)
	half := len(lines) / 2
	dir := t.TempDir()
	path := filepath.Join(dir, "tool_heavy.jsonl")
	write := func(b []byte) {
		importertest.WriteFile(t, path, b, 0o644)
	}
	first := joinLines(lines[:half])
	write(first)
	st := importertest.Store(t)
	importertest.Import(t, st, claudecode.New(), path)
	write(data)
	importertest.Import(t, st, claudecode.New(), path)
	kept := keptFile(t, st, path)
	if kept.Chunks != 2 || kept.Size != int64(len(data)) {
		t.Fatalf("after an append: %d chunks of %d bytes, want 2 of %d", kept.Chunks, kept.Size, len(data))
	}
	if got := readKept(t, st, path); string(got) != string(data) {
		t.Fatal("the kept bytes are not the file's")
	}
	// Rewritten in place: kept again from the start.
	edited := append([]byte("\n"), data...)
	write(edited)
	importertest.Import(t, st, claudecode.New(), path)
	kept = keptFile(t, st, path)
	if kept.Chunks != 1 || kept.Size != int64(len(edited)) {
		t.Fatalf("after a rewrite: %d chunks of %d bytes, want 1 of %d", kept.Chunks, kept.Size, len(edited))
	}
	if got := readKept(t, st, path); string(got) != string(edited) {
		t.Fatal("the kept bytes are not the rewritten file's")
	}
	_ = ctx
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := slices.Index(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

func joinLines(ls [][]byte) []byte {
	var out []byte
	for _, l := range ls {
		out = append(out, l...)
	}
	return out
}

func keptFile(t *testing.T, st *sqlite.Store, path string) loom.OriginalFile {
	t.Helper()
	files, err := st.OriginalFiles(context.Background(), "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("nothing kept of %s", path)
	return loom.OriginalFile{}
}

func readKept(t *testing.T, st *sqlite.Store, path string) []byte {
	t.Helper()
	var out []byte
	err := st.OriginalChunks(context.Background(), "alice", path, func(c loom.OriginalChunk) error {
		b, err := importer.DecompressOriginal(c.Data)
		out = append(out, b...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// captureFile is a real session file a capture reads while its agent
// writes it (testdata/agent-sessions/SOURCES.md).
type captureFile struct {
	file string
	f    importer.Format
	// seg is a segment size that cuts the whole file in many segments.
	seg int64
	// cuts, when set, are the stretches of lines [from, to) where the
	// file is read at every line, and every is how often it is read
	// elsewhere: a reading after every line of a file of hundreds of
	// big lines costs minutes (a fresh store per cut of a 2.7 MB file,
	// an import per line). LOOM_TEST_EVERY_CUT=1 reads them at every
	// line too. Unset, the file is read at every line.
	cuts  [][2]int
	every int
}

// captureFiles are Claude Code 2.1 with a compaction, Claude Code 1.0
// with a reply that starts several sub-agents at once, a Codex 0.39
// rollout, a Gemini CLI JSONL recording.
var captureFiles = []captureFile{
	// Its first turns, its compaction (lines 1256-1257) and its end.
	{"claude-code/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl", claudecode.New(), 64 << 10, [][2]int{{1, 80}, {1240, 1275}, {1830, 1863}}, 80},
	// Its reply of three sub-agents at once (lines 13-15), the two of
	// lines 227-228, and its end.
	{"claude-code/viewer-sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl", claudecode.New(), 16 << 10, [][2]int{{1, 40}, {215, 245}, {420, 438}}, 20},
	{"codex/vibecodingtracker-codex.jsonl", codex.Format{}, 4 << 10, nil, 0},
	{"gemini/vibecodingtracker-gemini.jsonl", gemini.Format{}, 4 << 10, nil, 0},
}

// everyCut reports whether the case's file is cut in two after line cut.
func (c captureFile) everyCut(cut int) bool {
	if c.cuts == nil || os.Getenv("LOOM_TEST_EVERY_CUT") != "" {
		return true
	}
	for _, r := range c.cuts {
		if cut >= r[0] && cut < r[1] {
			return true
		}
	}
	return cut%c.every == 0
}

// A session file read while its agent writes it (what capture and the
// hooks see: the prompt first, the reply later, a reading stopping at
// any line) ends as a fresh import of the whole file makes it: the same
// sessions (no fork), messages, parts in their order, model and usage,
// and the same export, ids and times included (a reply's completion,
// the session's last activity). It is read a line at a time, in
// two pieces cut at every line, and a line at a time a segment at a
// time; a copy that lost its model meanwhile gets it back from a
// reimport, which does not call it unchanged.
func TestCaptureBeforeReplyEqualsFreshImport(t *testing.T) {
	for _, c := range captureFiles {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(agentSessions, c.file))
			if err != nil {
				t.Skip("no real session files here")
			}
			lines := splitLines(data)
			path := filepath.Join(t.TempDir(), filepath.Base(c.file))
			write := func(b []byte) {
				importertest.WriteFile(t, path, b, 0o644)
			}
			fresh := importertest.Store(t)
			write(data)
			importertest.Import(t, fresh, c.f, path)
			want := importedWithModel(t, fresh, c.f.Tool())
			wantExport := exportAll(t, fresh)
			same := func(t *testing.T, st loom.Store) {
				t.Helper()
				sameImport(t, importedWithModel(t, st, c.f.Tool()), want)
				sameExport(t, exportAll(t, st), wantExport)
			}
			// lineByLine reads the file as its agent writes it, an
			// import after every line.
			lineByLine := func(t *testing.T) *sqlite.Store {
				st := importertest.Store(t)
				for n := 1; n <= len(lines); n++ {
					if n < len(lines) && !c.everyCut(n) {
						continue // a big file at its stretches only
					}
					write(joinLines(lines[:n]))
					importertest.Import(t, st, c.f, path)
				}
				return st
			}

			t.Run("line by line", func(t *testing.T) {
				st := lineByLine(t)
				same(t, st)

				// A copy that lost its model (as an older reader
				// stored it, not a change made in loom, which would
				// be activity): a reimport gives it back.
				ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Surface: c.f.Tool()})
				if err != nil {
					t.Fatal(err)
				}
				none := ""
				for _, s := range ss {
					if _, err := st.UpdateSession(context.Background(), s.ID, loom.SessionUpdate{Model: &none, KeepUpdatedAt: true}); err != nil {
						t.Fatal(err)
					}
				}
				tr := reimport(t, st, c.f)
				if tr.SessionsUnchanged == len(ss) {
					t.Errorf("reimport called every session unchanged: %+v", tr)
				}
				same(t, st)
			})

			t.Run("two pieces cut at every line", func(t *testing.T) {
				for cut := 1; cut < len(lines); cut++ {
					if !c.everyCut(cut) {
						continue
					}
					st := importertest.Store(t)
					write(joinLines(lines[:cut]))
					importertest.Import(t, st, c.f, path)
					write(data)
					importertest.Import(t, st, c.f, path)
					if !t.Run("cut after line "+strconv.Itoa(cut), func(t *testing.T) { same(t, st) }) {
						if os.Getenv("LOOM_TEST_ALL_CUTS") == "" {
							return // one cut shown is enough; LOOM_TEST_ALL_CUTS=1 shows all
						}
					}
				}
			})

			t.Run("line by line in segments", func(t *testing.T) {
				withSegments(t, c.seg)
				same(t, lineByLine(t))
			})
		})
	}
}

// exportAll is what loom session export --all --format jsonl writes of
// st: every session of alice, each with every message.
func exportAll(t *testing.T, st loom.Store) string {
	t.Helper()
	ctx := context.Background()
	all, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice", Archived: loom.WithArchived})
	if err != nil {
		t.Fatal(err)
	}
	data, err := export.Load(ctx, st, export.Order(all))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := export.Write(&b, export.JSONL, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// sameExport fails t at the first line of export got that is not
// want's: every field, the times included (when a message completed,
// when a session was last active), which lines read after a message or
// session was stored settle (docs/durability.md).
func sameExport(t *testing.T, got, want string) {
	t.Helper()
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a == b {
			continue
		}
		j := 0
		for j < len(a) && j < len(b) && a[j] == b[j] {
			j++
		}
		from := max(0, j-200)
		t.Errorf("export line %d of %d (want %d) differs from a fresh import's at %d:\n got %.500s\nwant %.500s", i+1, len(g), len(w), j, a[min(from, len(a)):], b[min(from, len(b)):])
		return
	}
}

// importedWithModel is imported with each session's model beside it.
func importedWithModel(t *testing.T, st loom.Store, tool string) map[string]string {
	t.Helper()
	out := imported(t, st, tool)
	ss, err := st.Sessions(context.Background(), loom.SessionFilter{UserID: "alice", Surface: tool})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if v, ok := out[s.Key]; ok {
			out[s.Key] = "model " + s.Model + " " + v
		}
	}
	return out
}
