package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
)

// kill -9 anywhere in an import of other agents' files loses and
// duplicates nothing: after imports killed as they write, one import to
// the end leaves the store as one import into an empty store does.
func TestImportKilledAnywhere(t *testing.T) {
	t.Parallel()
	if onPostgres() {
		t.Skip("the kill comes when the SQLite file grows; the PostgreSQL import is one transaction a batch, as on SQLite")
	}
	// A corpus of the sample Claude Code sessions copied into 12
	// projects, so that an import writes many batches.
	corpus := claudeCorpus(t, "p", 12)
	view := func(fx *fixture) []string {
		t.Helper()
		st := fx.openStore(t)
		defer st.Close()
		ss, err := st.Sessions(t.Context(), loom.SessionFilter{UserID: "local", Archived: loom.WithArchived})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range ss {
			msgs, err := st.Messages(t.Context(), s.ID, loom.MessageQuery{})
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, len(msgs))
			for i, m := range msgs {
				ids[i] = m.ID
			}
			out = append(out, s.Key+" "+strings.Join(ids, ","))
		}
		slices.Sort(out)
		return out
	}
	clean := newEmptyFixture(t)
	clean.mustExec(t, "session", "import", "--from", "claude-code", corpus)
	want := view(clean)

	fx := newEmptyFixture(t)
	kills := 0
	for range 8 {
		cmd := exec.Command(loomBinary(t), "session", "import", "--from", "claude-code", corpus)
		cmd.Dir, cmd.Env = fx.project, fx.binEnv()
		// Kill it once it has written something more, or let it end.
		if killWhenGrown(t, cmd, fx.db, 0) {
			kills++
		}
	}
	fx.mustExec(t, "session", "import", "--from", "claude-code", corpus)
	if got := view(fx); !slices.Equal(got, want) {
		t.Fatalf("after %d imports killed midway and one to the end, the store holds %d sessions, a clean import %d:\n%v\nwant\n%v",
			kills, len(got), len(want), got, want)
	}
	t.Logf("%d of 8 imports killed as they wrote", kills)
	if kills == 0 {
		t.Fatal("no import was killed while it wrote")
	}
}

// claudeCorpus copies the sample Claude Code sessions into n projects
// of a new directory, each copy with session ids of its own (ids come
// from the source, so the same files would be the same sessions): the
// tag and the project's number prefix them.
func claudeCorpus(t *testing.T, tag string, n int) string {
	t.Helper()
	src := filepath.Join(samples, "claude-code")
	corpus := filepath.Join(t.TempDir(), "projects")
	for i := range n {
		if err := os.CopyFS(filepath.Join(corpus, fmt.Sprintf("%s%02d", tag, i)), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(corpus, p)
		prefix := rel[:strings.IndexByte(rel, os.PathSeparator)]
		return os.WriteFile(p, []byte(strings.ReplaceAll(string(b), `"sessionId":"`, `"sessionId":"`+prefix)), 0o644)
	})
	return corpus
}

// killWhenGrown starts cmd and kills it (SIGKILL) once the SQLite store
// at db, its file and its WAL, has grown by more than grown bytes (an
// event: what the command wrote); it reports whether it killed it, and
// fails the test when cmd ended on its own with an error.
func killWhenGrown(t *testing.T, cmd *exec.Cmd, db string, grown int64) bool {
	t.Helper()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	size := func() int64 { return fileSize(db) + fileSize(db+"-wal") }
	before := size()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s, not killed: %v\n%s", strings.Join(cmd.Args, " "), err, out.String())
			}
			return false
		default:
		}
		if size() > before+grown {
			cmd.Process.Kill()
			<-done
			return true
		}
		time.Sleep(time.Millisecond) // poll: a file says nothing when it grows
	}
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}
