package postgres_test

import (
	"testing"

	"github.com/loomhq/loom/internal/testkit/storetest"
)

// TestRecordedRoots: every project root the user's sessions recorded,
// with its project and how many sessions ran there; another user's
// and those of no root are not listed.
func TestRecordedRoots(t *testing.T) {
	storetest.RecordedRoots(t, open(t, freshSchema(t)))
}
