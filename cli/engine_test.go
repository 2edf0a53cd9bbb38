package cli_test

import (
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestDollarParams(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`SELECT 1`: `SELECT 1`,
		`SELECT count(*) FROM t WHERE a = ? OR b = ?`: `SELECT count(*) FROM t WHERE a = $1 OR b = $2`,
		`SELECT '?' || ?`:    `SELECT '?' || $1`,
		`SELECT 'it''s?', ?`: `SELECT 'it''s?', $1`,
	} {
		if got := clitest.DollarParams(in); got != want {
			t.Errorf("dollarParams(%q) = %q, want %q", in, got, want)
		}
	}
}
