package clitest

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/sessionstore"
	"github.com/loomhq/loom/syncrun"
)

// OpenFor opens the store a URL names as cmd/loom does for a command
// with the given access: a Factory.OpenStore for tests that build their
// own Factory.
func OpenFor(ctx context.Context, dsn string, access cli.Access, opts ...sessionstore.Option) (loom.Engine, error) {
	return openFor(ctx, dsn, access, nil, opts...)
}

// OpenReplicaFor opens the store a URL names as cmd/loom does for loom
// sync (cli.Factory.OpenReplica).
func OpenReplicaFor(ctx context.Context, dsn string, opts ...sessionstore.Option) (loom.Engine, syncrun.Store, error) {
	return openReplica(ctx, dsn, nil, opts...)
}
