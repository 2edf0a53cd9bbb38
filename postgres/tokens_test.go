package postgres_test

import (
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/conformance"
)

func TestTokens(t *testing.T) {
	dsn := freshSchema(t)
	conformance.RunTokens(t, func(t *testing.T) loom.TokenStore { return open(t, dsn) })
}
