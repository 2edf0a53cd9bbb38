package nanobot

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// testdata/real is what nanobot 0.9.2 (npm's @jcheesepkg/nanobot,
// `nanobot agent -m` run by hand against a fake model on the Chat
// Completions API, as TestImportRealNanobot in cli/session/realclis
// runs it against its own) wrote in
// ~/.nanobot/sessions, the home directory renamed /home/u: two turns of
// the default session (a greeting, then a read_file of notes.txt), and
// a greeting in a session of another key (`--session cli:other`).
var (
	real = filepath.Join("testdata", "real")
	file = filepath.Join(real, "cli_default.jsonl")
)

// Each prompt and reply as typed and answered, the read completed by
// the tool message's content; no usage, as nanobot records none.
func TestRead(t *testing.T) {
	res := importertest.ReadSessions(t, Format{}, real, 2)
	s := importertest.Session(t, res, "cli_default")
	importertest.CheckTexts(t, s, loom.RoleUser, "Say hello in one line.", "What is in notes.txt?")
	importertest.CheckTexts(t, s, loom.RoleAssistant, "Hello there.", "It says alpha and beta.")
	importertest.CheckOneCall(t, s, "user assistant user assistant assistant", func(p loom.Part) bool {
		return p.Name == "read_file" && string(p.Output) == `"alpha\nbeta\n"`
	})
	if !s.UpdatedAt.After(s.CreatedAt) {
		t.Errorf("%s to %s", s.CreatedAt, s.UpdatedAt)
	}
	importertest.CheckNoUsage(t, s)
	if s := importertest.Session(t, res, "cli_other"); importertest.Roles(s) != "user assistant" {
		t.Errorf("cli_other: %s", importertest.Roles(s))
	}
}

// nanobot writes the file again after each turn, and past its memory
// window keeps only its last messages: a turn more is read as two
// messages more, and a file trimmed to its last turn loses nothing of
// what was imported.
func TestImportAndFollow(t *testing.T) {
	importertest.ImportsOnce(t, Format{}, real, 2, 7)
	root := importertest.CopyDir(t, real)
	path := filepath.Join(root, "cli_default.jsonl")
	data := importertest.ReadBytes(t, path)
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	importertest.Follows(t, Format{}, root, func() {
		more := string(data) + `{"content":"Thanks","role":"user"}` + "\n" + `{"content":"You are welcome.","role":"assistant"}` + "\n"
		importertest.WriteFile(t, path, []byte(more), 0o600)
	}, 2)
	// Trimmed to the metadata line and its last turn (the read and its
	// reply), as nanobot leaves a conversation past its memory window.
	st := importertest.Store(t)
	importertest.Import(t, st, Format{}, root)
	trimmed := lines[0] + strings.Join(lines[3:], "") + "\n"
	importertest.WriteFile(t, path, []byte(trimmed), 0o600)
	if rep := importertest.Import(t, st, Format{}, root); rep.SessionsNew != 1 || rep.MessagesAdded != 3 || len(rep.Problems) != 0 {
		t.Errorf("after the trim: %+v", rep)
	}
	listed, err := st.Sessions(t.Context(), loom.SessionFilter{Surface: Tool})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range listed {
		kinds = append(kinds, s.Kind+":"+strconv.Itoa(s.MessageCount))
	}
	slices.Sort(kinds)
	// The session keeps its 7 messages, and the trimmed file, whose
	// first messages are no longer those stored, is a fork of it that
	// holds its 3.
	if want := []string{"fork:3", "main:2", "main:7"}; !slices.Equal(kinds, want) {
		t.Errorf("sessions after the trim %v, want %v", kinds, want)
	}
}
