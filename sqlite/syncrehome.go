package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/loomhq/loom/synclog"
)

// SyncRehome gives the store a new host id when its log and the hub's
// copy of it part after their first shared records: a store restored
// from a backup (the hub holds records of it that it lost), a store
// copied to another machine (two machines write as one host), or a
// record at the host's index that it did not write. Without it the
// records written here after the parting would never leave the store,
// or those on the hub never come back.
//
// from is the host whose log was compared with the hub's: when the store
// is another host already (another process rehomed it), nothing is done.
// In one transaction: the records after shared are written again as the
// new host's first (the same stamps' HLCs and payloads; a trash's or a
// purge's view of the old host past shared becomes one of the new), the
// stamps of the changes they made move to the new host, and the old
// host counts as another machine of which the store has applied the
// first shared records: the next pull applies the hub's records of it
// after those, as any machine's.
//
// With junk (the hub's record after the shared ones is not one any
// machine with the key wrote), the new host's log gets a Retired record
// of the old host after shared, and the store stops the old host's log
// there itself: every machine stops before the junk instead of failing
// on it at every sync.
func (s *Store) SyncRehome(ctx context.Context, from synclog.HostID, shared uint64, junk bool) (synclog.Rehome, error) {
	var r synclog.Rehome
	err := s.withTx(ctx, func(tx *sql.Tx) error {
		w := writes{s, tx}
		old, base, err := syncPos(ctx, w)
		if err != nil {
			return err
		}
		if old == "" {
			return fmt.Errorf("sync is not set up on this store")
		}
		if old != from {
			// Another process of this machine did it meanwhile.
			r = synclog.Rehome{Old: from, New: old}
			return nil
		}
		var rows uint64
		if err := tx.QueryRowContext(ctx, syncLastIndexSQL).Scan(&rows); err != nil {
			return fmt.Errorf("read the sync log: %w", err)
		}
		if shared > rows-base {
			return fmt.Errorf("rehome after record %d of host %s: the store holds %d of its records", shared, old, rows-base)
		}
		var cut synclog.HLC // the HLC of the last shared record
		if shared > 0 {
			if err := tx.QueryRowContext(ctx, `SELECT hlc FROM sync_log WHERE idx = ?`, base+shared).Scan(&cut); err != nil {
				return fmt.Errorf("read the sync log: %w", err)
			}
		}
		r = synclog.Rehome{Old: old, New: synclog.NewHostID(), Shared: shared}
		move := func(v synclog.Vector) {
			if n := v[old]; n > shared {
				v[r.New], v[old] = n-shared, shared
			}
		}
		// Rows base+shared+1 … rows are the records to write again, as
		// rows+1 …: the new host's 1 … with base rows. They are copied
		// by SQLite, never held here; then the trashes and purges among
		// the copies get their view of the hosts moved.
		res, err := tx.ExecContext(ctx, `INSERT INTO sync_log (hlc, payload)
			SELECT hlc, payload FROM sync_log WHERE idx > ? AND idx <= ? ORDER BY idx`, base+shared, rows)
		if err != nil {
			return fmt.Errorf("write the sync log: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("write the sync log: %w", err)
		}
		r.Moved = int(n)
		seen, err := tx.QueryContext(ctx, `SELECT idx, payload FROM sync_log WHERE idx > ? AND substr(payload, 2, 1) IN (?, ?)`,
			rows, []byte{byte(synclog.TypeTrashed)}, []byte{byte(synclog.TypePurged)})
		if err != nil {
			return fmt.Errorf("read the sync log: %w", err)
		}
		type rec struct {
			idx     int64
			payload []byte
		}
		var views []rec
		for seen.Next() {
			var x rec
			if err := seen.Scan(&x.idx, &x.payload); err != nil {
				seen.Close()
				return fmt.Errorf("read the sync log: %w", err)
			}
			views = append(views, x)
		}
		if err := seen.Close(); err != nil {
			return fmt.Errorf("read the sync log: %w", err)
		}
		for _, x := range views {
			p, err := synclog.Decode(x.payload)
			if err != nil {
				return fmt.Errorf("read the sync log: %w", err)
			}
			switch p := p.(type) {
			case *synclog.Trashed:
				move(p.Seen)
			case *synclog.Purged:
				move(p.Seen)
			}
			b, err := synclog.Encode(p)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE sync_log SET payload = ? WHERE idx = ?`, b, x.idx); err != nil {
				return fmt.Errorf("write the sync log: %w", err)
			}
		}
		for _, q := range []string{
			`UPDATE sync_state SET value = ? WHERE name = 'host'`,
			`INSERT INTO sync_state (name, value) VALUES ('base', CAST(?2 AS TEXT))
				ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
			`INSERT INTO sync_applied (host, idx) VALUES (?3, ?4) ON CONFLICT (host) DO UPDATE SET idx = excluded.idx`,
			`UPDATE sync_messages SET host = ?1 WHERE host = ?3 AND hlc > ?5`,
			`UPDATE sync_messages SET usage_host = ?1 WHERE usage_host = ?3 AND usage_hlc > ?5`,
			`UPDATE sync_parts SET host = ?1 WHERE host = ?3 AND hlc > ?5`,
		} {
			if _, err := tx.ExecContext(ctx, q, string(r.New), rows, string(old), shared, cut); err != nil {
				return fmt.Errorf("give the store a new sync host: %w", err)
			}
		}
		stamp := func(st *synclog.Stamp) {
			if st.Host == old && st.HLC > cut {
				st.Host = r.New
			}
		}
		if err := rewriteState(ctx, w, lifeState, func(l *synclog.Life) {
			if l.Trash != nil {
				stamp(&l.Trash.Stamp)
				move(l.Trash.Seen)
			}
			stamp(&l.Restore)
			if l.Work != nil {
				move(l.Work)
			}
		}); err != nil {
			return err
		}
		if err := rewriteState(ctx, w, metaState, func(m *any) { restamp(*m, old, r.New, cut) }); err != nil {
			return err
		}
		s.host.Store(&r.New)
		if junk {
			if err := retire(ctx, w, old, shared); err != nil {
				return err
			}
			if err := w.Record(ctx, &synclog.Retired{Host: old, After: shared}); err != nil {
				return err
			}
		}
		return nil
	})
	return r, err
}

// retire stops host's log after index after (synclog.Retired): the
// earliest word holds.
func retire(ctx context.Context, w writes, host synclog.HostID, after uint64) error {
	_, err := w.ExecContext(ctx, `INSERT INTO sync_state (name, value) VALUES ('retired ' || ?1, CAST(?2 AS TEXT))
		ON CONFLICT (name) DO UPDATE SET value = CAST(min(CAST(value AS INTEGER), ?2) AS TEXT)`, string(host), after)
	if err != nil {
		return fmt.Errorf("retire host %s: %w", host, err)
	}
	return nil
}

// SyncRetired returns the hosts whose logs stop (synclog.Retired), with
// the index after which they do.
func (s *Store) SyncRetired(ctx context.Context) (map[synclog.HostID]uint64, error) {
	rows, err := reads{s}.QueryContext(ctx, `SELECT substr(name, 9), CAST(value AS INTEGER) FROM sync_state WHERE name LIKE 'retired %'`)
	if err != nil {
		return nil, fmt.Errorf("read sync state: %w", err)
	}
	defer rows.Close()
	out := map[synclog.HostID]uint64{}
	for rows.Next() {
		var h string
		var after uint64
		if err := rows.Scan(&h, &after); err != nil {
			return nil, fmt.Errorf("read sync state: %w", err)
		}
		out[synclog.HostID(h)] = after
	}
	return out, rows.Err()
}

// rewriteState rewrites st of every session with edit.
func rewriteState[T any](ctx context.Context, w writes, st sessionState, edit func(*T)) error {
	rows, err := w.QueryContext(ctx, `SELECT session_id, `+st.col+` FROM `+st.table)
	if err != nil {
		return fmt.Errorf("read %s: %w", st.what, err)
	}
	type entry struct{ id, text string }
	var all []entry
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.id, &e.text); err != nil {
			rows.Close()
			return fmt.Errorf("read %s: %w", st.what, err)
		}
		all = append(all, e)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("read %s: %w", st.what, err)
	}
	for _, e := range all {
		var v T
		// Numbers stay as written: a stamp's HLC has more digits than a
		// float keeps.
		d := json.NewDecoder(strings.NewReader(e.text))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return fmt.Errorf("read %s of %s: %w", st.what, e.id, err)
		}
		edit(&v)
		if err := saveState(ctx, w, st, e.id, v); err != nil {
			return err
		}
	}
	return nil
}

// restamp moves every stamp in v, a decoded JSON value, of host old
// later than cut to host to.
func restamp(v any, old, to synclog.HostID, cut synclog.HLC) {
	switch v := v.(type) {
	case map[string]any:
		if h, ok := v["host"].(string); ok && h == string(old) && len(v) == 2 {
			n, ok := v["hlc"].(json.Number)
			if x, err := strconv.ParseUint(string(n), 10, 64); ok && err == nil && synclog.HLC(x) > cut {
				v["host"] = string(to)
			}
			return
		}
		for _, x := range v {
			restamp(x, old, to, cut)
		}
	case []any:
		for _, x := range v {
			restamp(x, old, to, cut)
		}
	}
}
