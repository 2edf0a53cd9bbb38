package query

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
)

// SyncRecords is loom.SyncStore.SyncRecords read from db in d's SQL.
func SyncRecords(ctx context.Context, db rowscan.Querier, d Dialect, user, host string, after int64, limit int) ([]loom.SyncRecord, error) {
	limit, err := sqlstore.SyncPage(user, host, after, limit)
	if err != nil {
		return nil, err
	}
	c := New(d)
	q := c.SQL(`SELECT `+rowscan.SyncRecordColumns+` FROM sync_records
		WHERE user_id = ? AND host_id = ? AND idx > ? ORDER BY idx LIMIT ?`, user, host, after, limit)
	out, err := rowscan.SyncPage(ctx, db, q, c.Args...)
	if err != nil {
		return nil, fmt.Errorf("read sync records of host %s: %w", host, err)
	}
	return out, nil
}

// SyncHosts is loom.SyncStore.SyncHosts read from db in d's SQL.
func SyncHosts(ctx context.Context, db rowscan.Querier, d Dialect, user string) ([]loom.SyncHost, error) {
	if err := sqlstore.SyncUser(user); err != nil {
		return nil, err
	}
	c := New(d)
	q := c.SQL(`SELECT `+rowscan.SyncHostColumns+` FROM sync_hosts WHERE user_id = ? ORDER BY host_id`, user)
	out, err := rowscan.All(ctx, db, rowscan.SyncHost, q, c.Args...)
	if err != nil {
		return nil, fmt.Errorf("read sync hosts: %w", err)
	}
	return out, nil
}
