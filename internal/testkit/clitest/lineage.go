package clitest

import (
	"context"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/internal/testkit/storetest"
	"github.com/loomhq/loom/sessionstore"
)

// CountingRun runs loom in process on a store that counts its calls.
func (fx *Fixture) CountingRun(t *testing.T, args ...string) (Result, *storetest.Counting) {
	t.Helper()
	var cs *storetest.Counting
	r := fx.RunWith(t, RunOpts{Before: func(f *cli.Factory) {
		open := f.OpenStore
		f.OpenStore = func(ctx context.Context, url string, access cli.Access, opts ...sessionstore.Option) (loom.Engine, error) {
			st, err := open(ctx, url, access, opts...)
			if err != nil {
				return nil, err
			}
			cs = storetest.NewCounting(st)
			return cs, nil
		}
	}}, args...)
	if r.Code != 0 {
		t.Fatalf("loom %v: exit %d\n%s", args, r.Code, r.Stderr)
	}
	return r, cs
}
