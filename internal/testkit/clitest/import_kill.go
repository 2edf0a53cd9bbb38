package clitest

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

// ClaudeCorpus copies the sample Claude Code sessions into n projects
// of a new directory, each copy with session ids of its own (ids come
// from the source, so the same files would be the same sessions): the
// tag and the project's number prefix them.
func ClaudeCorpus(t *testing.T, tag string, n int) string {
	t.Helper()
	src := filepath.Join(Samples, "claude-code")
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

// KillWhenGrown starts cmd and kills it (SIGKILL) once the SQLite store
// at db, its file and its WAL, has grown by more than grown bytes (an
// event: what the command wrote); it reports whether it killed it, and
// fails the test when cmd ended on its own with an error.
func KillWhenGrown(t *testing.T, cmd *exec.Cmd, db string, grown int64) bool {
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

// StoreView is every session of fx's store as its key and the ids of
// its messages in order, sorted: two stores with the same view hold the
// same sessions and messages.
func StoreView(t *testing.T, fx *Fixture) []string {
	t.Helper()
	st := fx.OpenStore(t)
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
