package postgres_test

import (
	"context"
	"testing"

	"github.com/loomhq/loom/internal/testkit/storetest"
)

// BenchmarkLongSession measures newest-N, fork, rewind and append on a
// session of 100,000 messages (2,000 under -short) in a schema of its
// own; see storetest.LongSession.
func BenchmarkLongSession(b *testing.B) {
	st := open(b, freshSchema(b))
	storetest.LongSession(b, st, func() error {
		_, err := st.Pool().Exec(context.Background(), analyzeOwn)
		return err
	})
}
