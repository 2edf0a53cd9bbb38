package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/fsfault"
	"github.com/loomhq/loom/sqlite"
)

// Opening with ModeWrite or ModeRead never creates a store; ModeCreate
// makes the file and its directory.
func TestOpenModesMissingStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, mode := range []sqlite.Mode{sqlite.ModeRead, sqlite.ModeWrite} {
		path := filepath.Join(dir, "no", "such", "sessions.db")
		_, err := sqlite.OpenMode(ctx, path, mode)
		want := fmt.Sprintf("no store at %s (directory %s does not exist)", path, filepath.Dir(path))
		if loom.ErrorCode(err) != loom.ENOTFOUND || err.Error() != want {
			t.Fatalf("mode %d, missing directory: %v; want %q", mode, err, want)
		}
		path = filepath.Join(dir, "sessions.db")
		_, err = sqlite.OpenMode(ctx, path, mode)
		if loom.ErrorCode(err) != loom.ENOTFOUND || err.Error() != "no store at "+path {
			t.Fatalf("mode %d, missing file: %v", mode, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("opening a missing store created %v", entries)
	}
	path := filepath.Join(dir, "new", "sessions.db")
	st, err := sqlite.OpenMode(ctx, path, sqlite.ModeCreate)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("ModeCreate made no file: %v", err)
	}
}

// A store this process cannot write (the file read-only, its directory
// read-only, or the file system read-only) opens read-only with
// ModeRead, reads as usual, writes nothing beside it, and refuses writes
// with one clear error; ModeWrite refuses to open it; one that needs a
// migration says so.
func TestReadOnlyStore(t *testing.T) {
	for _, place := range fsfault.ReadOnlyKinds {
		t.Run(place, func(t *testing.T) {
			dir := fsfault.SharedDir(t, "loom-ro-", 0o755)
			db := filepath.Join(dir, "sessions.db")
			old := filepath.Join(dir, "old.db")
			id := seedReadOnly(t, db, old)
			nobody := fsfault.MakeReadOnly(t, place, dir, db, old)
			if !nobody {
				if err := checkReadOnly(db, old, id); err != nil {
					t.Fatal(err)
				}
				return
			}
			out, err := asNobody(t, "readonly", db+"\n"+old, id).CombinedOutput()
			if errors.Is(err, syscall.EPERM) {
				t.Skipf("running a process as nobody is not permitted here: %v", err)
			}
			if err != nil {
				t.Fatalf("as nobody: %v\n%s", err, out)
			}
		})
	}
}

// checkReadOnly is the test of a store this process cannot write; it
// runs in the test or, as root, in a child process running as nobody.
func checkReadOnly(db, old, id string) error {
	ctx := context.Background()
	dir := filepath.Dir(db)
	before, _ := os.ReadDir(dir)
	st, err := sqlite.OpenMode(ctx, db, sqlite.ModeRead)
	if err != nil {
		return fmt.Errorf("open read-only: %w", err)
	}
	if !st.ReadOnly() {
		st.Close()
		return errors.New("the store was not opened read-only")
	}
	list, err := st.Sessions(ctx, loom.SessionFilter{UserID: "alice"})
	if err != nil || len(list) != 1 {
		return fmt.Errorf("list = %d sessions, %v", len(list), err)
	}
	if msgs, err := st.Messages(ctx, id, loom.MessageQuery{}); err != nil || len(msgs) != 2 {
		return fmt.Errorf("messages = %d, %v", len(msgs), err)
	}
	if hits, err := st.Search(ctx, loom.SearchQuery{Text: "zebra", UserID: "alice"}); err != nil || len(hits) != 1 {
		return fmt.Errorf("search = %d hits, %v", len(hits), err)
	}
	// A report reads the messages when the roll-up is behind.
	if sl, err := st.UsageSlices(ctx, loom.UsageSliceFilter{UserID: "alice", LongContext: 200_000}); err != nil ||
		len(sl) != 1 || sl[0].Usage.InputTokens != 10 {
		return fmt.Errorf("usage slices = %+v, %v", sl, err)
	}
	err = st.Append(ctx, list[0], msg("one more"))
	if loom.ErrorCode(err) != loom.EINVALID || err.Error() != "cannot write "+db+": it is open read-only" {
		return fmt.Errorf("append to a read-only store: %v", err)
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		return fmt.Errorf("reading left files beside the store: %v, before %v", after, before)
	}
	_, err = sqlite.OpenMode(ctx, db, sqlite.ModeWrite)
	if loom.ErrorCode(err) != loom.EINVALID || !strings.HasPrefix(err.Error(), "cannot write "+db+": ") || !strings.Contains(err.Error(), "read-only") {
		return fmt.Errorf("open for writing: %v", err)
	}
	_, err = sqlite.OpenMode(ctx, old, sqlite.ModeRead)
	// The schema it needs is the newest, whatever number that is now.
	want := regexp.MustCompile("^" + regexp.QuoteMeta(old) + ` needs an upgrade to schema [0-9]+ but is read-only; open it once with write access$`)
	if err == nil || !want.MatchString(err.Error()) {
		return fmt.Errorf("open of a store that needs a migration: %v; want %s", err, want)
	}
	return nil
}

// seedReadOnly makes a store with one session at db, and at old one that
// says it is at schema 1, and returns the session's id.
func seedReadOnly(t *testing.T, db, old string) string {
	t.Helper()
	id := loom.NewID()
	for _, p := range []string{db, old} {
		s := &loom.Session{ID: id, UserID: "alice", Key: "cli:ro"}
		st, err := sqlite.Open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		// The answer has usage that no report has brought into the
		// roll-up yet.
		answer := msg("an answer")
		answer.Role, answer.Model, answer.Usage = loom.RoleAssistant, "m", loom.Usage{InputTokens: 10, OutputTokens: 2}
		if err := st.Append(context.Background(), s, msg("a zebra question"), answer); err != nil {
			t.Fatal(err)
		}
		if p == old {
			if _, err := st.DB().Exec(`PRAGMA user_version = 1`); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// asNobody runs a child role of this test binary as the user nobody.
func asNobody(t *testing.T, role, db, session string) *exec.Cmd {
	t.Helper()
	bin := filepath.Join(fsfault.SharedDir(t, "loom-ro-", 0o755), "sqlite.test")
	fsfault.CopyFile(t, os.Args[0], bin, 0o755)
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = []string{"LOOM_TEST_CHILD=" + role, "LOOM_TEST_DB=" + db, "LOOM_TEST_SESSION=" + session, "HOME=/"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}
