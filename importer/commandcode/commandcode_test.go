package commandcode

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is what Command Code 1.64.0 (npm's command-code, run
// with --local-only against a fake model on the Chat Completions API,
// as TestImportRealCommandCode in cli/session/realclis runs it) wrote
// in ~/.commandcode/projects, the home directory renamed /home/u: a
// session of two turns, the second continued with -c (work), and one
// whose turn reads a file with reasoning and cached tokens (other).
var (
	real  = filepath.Join("testdata", "real")
	work  = "aa1f68f2-4a0d-42a8-9572-77ea16d6c568"
	other = "03be03a4-0272-443e-a38b-01702075046f"
	file  = filepath.Join(real, "home-u-work", work+".jsonl")
)

// Each prompt and reply as typed and answered, reasoning as reasoning,
// the read's call completed with what the tool returned (the user
// message of its result is no message), and each reply's usage with
// the cached tokens apart from the input that counts them.
func TestRead(t *testing.T) {
	// Two sessions: the sidecar files are not sessions.
	res := importertest.ReadSessions(t, Format{}, real, 2)
	s := importertest.Session(t, res, work)
	importertest.CheckTexts(t, s, loom.RoleUser, "Say hello in one line.", "One more on the greeting?")
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Hello there.", "Continued and answering.")
	if u := importertest.SumUsage(s); u.InputTokens != 800+2100 || u.CacheReadTokens != 200 || u.OutputTokens != 15+4 || u.APICalls != 2 {
		t.Errorf("usage %+v", u)
	}
	if s.Cwd != "/home/u/work" || s.Model != "fake/gpt-fake" || s.Kind != loom.KindMain {
		t.Errorf("cwd %q, model %q, kind %s", s.Cwd, s.Model, s.Kind)
	}
	s = importertest.Session(t, res, other)
	if tl := importertest.TallyOf(s); tl.Reasoning != 2 {
		t.Errorf("%+v, want two reasoning parts", tl)
	}
	importertest.CheckOneCall(t, s, "user assistant assistant", func(p loom.Part) bool {
		return p.Name == "read_file" && slices.Contains([]string{`"Read 1/1 file, 2 lines\n1: alpha\n2: beta"`}, string(p.Output))
	})
	if u := importertest.SumUsage(s); u.InputTokens != 1000+1400 || u.CacheReadTokens != 300 || u.OutputTokens != 49 || u.APICalls != 2 {
		t.Errorf("usage %+v", u)
	}
}

// A rewind leaves entries off the branch Command Code continues (the
// one that ends with the last entry, walked back by parentId): the
// session is that branch, the others counted as skipped.
func TestReadBranch(t *testing.T) {
	root := importertest.CopyDir(t, real)
	path := filepath.Join(root, "home-u-work", work+".jsonl")
	// A prompt that follows the first reply again, as after a rewind of
	// the second turn.
	importertest.AppendLines(t, path,
		`{"type":"message","id":"r1","parentId":"e1ab264f","timestamp":"2026-11-27T14:42:10.000Z","message":{"role":"user","content":[{"type":"text","text":"Instead, this."}],"meta":{"source":"user"}}}`)
	res := importertest.ReadFile(t, Format{}, path)
	s := importertest.Session(t, res, work)
	importertest.CheckTexts(t, s, loom.RoleUser, "Say hello in one line.", "Instead, this.")
	if res.Skipped["off-branch"] != 2 {
		t.Errorf("skipped %v, want the rewound turn's 2 entries", res.Skipped)
	}
}

func TestImportAndFollow(t *testing.T) {
	importertest.ImportsAndFollows(t, Format{}, real, 2, 7, filepath.Join("home-u-work", work+".jsonl"),
		`{"type":"message","id":"f1","parentId":"378e3a7a","timestamp":"2026-11-27T14:42:20.000Z","message":{"role":"user","content":[{"type":"text","text":"Thanks"}],"meta":{"source":"user"}}}`)
	importertest.Malformed(t, Format{}, file, "p/"+work+".jsonl")
}

// A compaction entry (its summary, as Command Code 1.64.0's own code
// turns one back into the model's context) is a summary message
// counted as a compaction; no run here made one, as -p sends /compact
// to the model as a prompt.
func TestReadCompaction(t *testing.T) {
	root := importertest.CopyDir(t, real)
	path := filepath.Join(root, "home-u-work", work+".jsonl")
	importertest.AppendLines(t, path,
		`{"type":"compaction","id":"c1","parentId":"378e3a7a","timestamp":"2026-11-27T14:42:30.000Z","summary":"Two greetings were exchanged."}`)
	res := importertest.ReadFile(t, Format{}, path)
	importertest.CheckValidOf(t, Tool, res)
	s := importertest.Session(t, res, work)
	last := s.Messages[len(s.Messages)-1]
	if last.Role != loom.RoleSummary || last.Text() != "Two greetings were exchanged." || importertest.SumUsage(s).Compactions != 1 {
		t.Errorf("last message %s %q, usage %+v", last.Role, last.Text(), importertest.SumUsage(s))
	}
}

// Command Code 0.27 to 0.45 wrote flat lines with no header, the role
// and content on the line itself (metadata version 2): each is a
// message, in the order of the file, the session the lines' sessionId;
// a tool call and its result pair up as in the later format. A line of
// the flat format that is not JSON is one problem, the rest kept.
func TestReadFlatFormat(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "home-u-old", "5d1f0c3e-8a2b-4c6d-9e7f-0a1b2c3d4e5f.jsonl")
	importertest.MkdirAll(t, filepath.Dir(path))
	lines := []string{
		`{"id":"u1","timestamp":"2025-08-01T10:00:00.000Z","sessionId":"5d1f0c3e-8a2b-4c6d-9e7f-0a1b2c3d4e5f","parentId":null,"role":"user","content":"What is in notes.txt?","gitBranch":"main","metadata":{"version":2}}`,
		`{"id":"a1","timestamp":"2025-08-01T10:00:02.000Z","sessionId":"5d1f0c3e-8a2b-4c6d-9e7f-0a1b2c3d4e5f","parentId":"u1","role":"assistant","content":[{"type":"text","text":"Reading it."},{"type":"tool_use","id":"t1","name":"read_file","input":{"file_path":"notes.txt"}}],"gitBranch":"main","metadata":{"version":2}}`,
		`{"id":"r1","timestamp":"2025-08-01T10:00:03.000Z","sessionId":"5d1f0c3e-8a2b-4c6d-9e7f-0a1b2c3d4e5f","parentId":"a1","role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"alpha"}],"gitBranch":"main","metadata":{"version":2}}`,
		`not json at all`,
		`{"id":"a2","timestamp":"2025-08-01T10:00:05.000Z","sessionId":"5d1f0c3e-8a2b-4c6d-9e7f-0a1b2c3d4e5f","parentId":"u1","role":"assistant","content":[{"type":"text","text":"It says alpha."}],"gitBranch":"main","metadata":{"version":2}}`,
	}
	importertest.WriteFile(t, path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	res := importertest.ReadFile(t, Format{}, path)
	s := importertest.Session(t, res, "5d1f0c3e-8a2b-4c6d-9e7f-0a1b2c3d4e5f")
	importertest.CheckTexts(t, s, loom.RoleUser, "What is in notes.txt?")
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Reading it.", "It says alpha.")
	importertest.CheckOneCall(t, s, "user assistant assistant", func(p loom.Part) bool {
		return p.Name == "read_file" && strings.Contains(string(p.Output), "alpha")
	})
	if len(res.Problems) != 1 || len(res.Skipped) != 0 {
		t.Errorf("problems %+v, skipped %v; want the one line that is not JSON", res.Problems, res.Skipped)
	}
}
