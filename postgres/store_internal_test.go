package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/loomhq/loom"
)

// The server's refusals as the store says them: disk_full is
// loom.ENOSPACE with the server's error kept as its cause; out of
// memory and a configured limit are no full disk.
func TestServerError(t *testing.T) {
	full := &pgconn.PgError{Severity: "ERROR", Code: "53100", Message: `could not extend file "base/16384/16385": No space left on device`}
	err := fmt.Errorf("commit: %w", serverError(full))
	var pe *pgconn.PgError
	if loom.ErrorCode(err) != loom.ENOSPACE || !errors.As(err, &pe) || pe != full ||
		loom.ErrorMessage(err) != "the PostgreSQL server is out of disk space: free some on its machine, then try again" {
		t.Fatalf("disk_full: %v (%s)", err, loom.ErrorCode(err))
	}
	for _, code := range []string{"53200", "53400", "40001"} {
		e := &pgconn.PgError{Severity: "ERROR", Code: code, Message: "no"}
		if got := serverError(e); got != error(e) || loom.ErrorCode(got) != loom.EINTERNAL {
			t.Errorf("SQLSTATE %s: %v (%s)", code, got, loom.ErrorCode(got))
		}
	}
	if got := serverError(&pgconn.PgError{Code: "22021", Message: "invalid byte sequence"}); loom.ErrorCode(got) != loom.EINVALID {
		t.Errorf("invalid text: %v", got)
	}
}
