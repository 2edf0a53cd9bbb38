package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/loomhq/loom"
)

// The system's ENOSPC, wherever it surfaces in a write's error, is a
// full disk as SQLITE_FULL is; other errors stay what they are.
func TestFullErrors(t *testing.T) {
	s := &Store{path: "/data/sessions.db"}
	enospc := fmt.Errorf("commit: %w", &fs.PathError{Op: "write", Path: "/data/sessions.db-wal", Err: syscall.ENOSPC})
	err := s.full(enospc)
	if loom.ErrorCode(err) != loom.ENOSPACE || !errors.Is(err, syscall.ENOSPC) ||
		loom.ErrorMessage(err) != "cannot write /data/sessions.db: its disk is full; free some space there, then try again" {
		t.Fatalf("ENOSPC: %v (%s)", err, loom.ErrorCode(err))
	}
	if again := s.full(fmt.Errorf("sync log: %w", err)); loom.ErrorCode(again) != loom.ENOSPACE || errors.Unwrap(again) != err {
		t.Fatalf("a full disk told twice: %v", again)
	}
	for _, other := range []error{nil, errors.New("disk I/O error"), fmt.Errorf("write: %w", syscall.EIO), loom.Errorf(loom.EINVALID, "bad")} {
		if got := s.full(other); got != other {
			t.Errorf("full(%v) = %v", other, got)
		}
	}
}
