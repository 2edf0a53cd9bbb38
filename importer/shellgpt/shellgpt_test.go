package shellgpt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/chat_cache/notes was written by ShellGPT 1.5.1's own
// CLI (python3 -m sgpt --chat notes), run from its source at commit
// a082bd5327ce0c4ef5a0284d9060e833be9444a6 by testdata/gen.sh, with the
// OpenAI client stood in for by testdata/openai (the model's replies as
// the client's stream of chunks): a prompt answered with a call of its
// execute_shell_command function (cat notes.txt, run for real) and a
// reply, then a second prompt and its reply.
var (
	real = filepath.Join("testdata", "chat_cache")
	file = filepath.Join(real, "notes")
)

// The system role's prompt, both prompts as typed, the replies as sgpt
// stored them, and the function call completed with its output.
func TestRead(t *testing.T) {
	res := importertest.ReadClean(t, Format{}, real, 1)
	s := importertest.Session(t, res, "notes")
	importertest.CheckRoles(t, s, "system user assistant assistant user assistant")
	importertest.CheckTexts(t, s, loom.RoleUser, "What is in notes.txt?", "How many lines is that?")
	if got := importertest.Texts(s, loom.RoleAssistant); len(got) != 2 || !strings.HasSuffix(got[0], "buy milk and call Ann.") || got[1] != "Two lines." {
		t.Errorf("replies %q", got)
	}
	if calls := importertest.Calls(s); !slices.Equal(calls, []string{`execute_shell_command completed {"shell_command":"cat notes.txt"} "Exit code: 0, Output:\nbuy milk\ncall Ann\n"`}) {
		t.Errorf("calls %q", calls)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if !s.CreatedAt.Equal(fi.ModTime()) {
		t.Errorf("created %v, want the file's time %v", s.CreatedAt, fi.ModTime())
	}
}

// The default place is chat_cache in the temporary directory, which
// $CHAT_CACHE_PATH replaces, as in sgpt.
func TestRoots(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if got := (Format{}).Roots(get, "/home/u"); !slices.Equal(got, []string{"/tmp/chat_cache"}) {
		t.Errorf("roots %q", got)
	}
	env["TMPDIR"] = "/var/tmp"
	if got := (Format{}).Roots(get, "/home/u"); !slices.Equal(got, []string{"/var/tmp/chat_cache"}) {
		t.Errorf("roots with TMPDIR %q", got)
	}
	env[cacheEnv] = "/data/chats"
	if got := (Format{}).Roots(get, "/home/u"); !slices.Equal(got, []string{"/data/chats"}) {
		t.Errorf("roots with %s %q", cacheEnv, got)
	}
}

// A chat is followed as sgpt rewrites its file after each reply.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 1, 6)
	data := importertest.ReadBytes(t, file)
	root := t.TempDir()
	path := filepath.Join(root, "notes")
	// The file as sgpt left it after the first prompt's reply.
	cut := strings.Index(string(data), `, {"role": "user", "content": "How many`)
	if cut < 0 {
		t.Fatal("testdata has no second prompt")
	}
	importertest.WriteFile(t, path, append(data[:cut:cut], ']'), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
	importertest.Follows(t, Format{}, root, func() {
		importertest.WriteFile(t, path, data, 0o644)
	}, 2)
}

// Named on the command line, the directory that holds the chat cache
// (the temporary directory) is read as its chat_cache, as the cache
// itself is: its chats are imported, and what else it holds is not
// taken for one.
func TestParentOfChatCache(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, filepath.Dir(real), 1, 6)
}

// Every entry of the chat cache is a chat to sgpt (it lists them all,
// and reads a chat by its name there): a directory in it is one line
// and a file that could not be read, and the chats beside it are
// imported.
func TestDirectoryInChatCache(t *testing.T) {
	root := importertest.CopyDir(t, real)
	dir := filepath.Join(root, "old")
	importertest.MkdirAll(t, filepath.Join(dir, "inside"))
	rep := importertest.Import(t, importertest.Store(t), Format{}, root)
	if rep.SessionsNew != 1 || rep.FilesFailed != 1 || len(rep.Problems) != 1 || rep.Problems[0].File != dir {
		t.Errorf("%d sessions, %d files failed, problems %v; want 1, 1 and one line for %s", rep.SessionsNew, rep.FilesFailed, rep.Problems, dir)
	}
}
