package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
)

// The hub's store of teams (loom.TeamHub): see migrations/0015_teams.sql.

// TeamChain implements loom.TeamHub.
func (s *Store) TeamChain(ctx context.Context, team string, after int64) ([]loom.TeamEntry, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, entry, received_at FROM team_chain
		WHERE team_id = $1 AND seq > $2 ORDER BY seq`, team, after)
	if err != nil {
		return nil, fmt.Errorf("team %s's chain: %w", team, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (loom.TeamEntry, error) {
		var e loom.TeamEntry
		err := r.Scan(&e.Seq, &e.Entry, &e.ReceivedAt)
		return e, err
	})
}

// AppendTeamEntry implements loom.TeamHub.
func (s *Store) AppendTeamEntry(ctx context.Context, team string, seq int64, entry []byte, members []loom.TeamMember) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("team %s: %w", team, err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO team_chain (team_id, seq, entry, received_at) VALUES ($1, $2, $3, now())`, team, seq, entry); err != nil {
		if isUnique(err) {
			return loom.Errorf(loom.ECONFLICT, "team %s has an entry %d already: read the chain again", team, seq)
		}
		return fmt.Errorf("team %s: entry %d: %w", team, seq, err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM team_members WHERE team_id = $1`, team); err != nil {
		return fmt.Errorf("team %s: %w", team, err)
	}
	fps := make([]string, len(members))
	users := make([]string, len(members))
	for i, m := range members {
		fps[i], users[i] = m.Member, m.User
	}
	if _, err := tx.Exec(ctx, `INSERT INTO team_members (team_id, member, user_id)
		SELECT $1::text, m.fp, m.u FROM unnest($2::text[], $3::text[]) AS m (fp, u)`, team, fps, users); err != nil {
		return fmt.Errorf("team %s: members: %w", team, err)
	}
	return tx.Commit(ctx)
}

// TeamAccess implements loom.TeamHub.
func (s *Store) TeamAccess(ctx context.Context, team, user string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM team_members WHERE team_id = $1 AND user_id = $2)`, team, user).Scan(&ok)
	return ok, err
}

// PutTeamRecords implements loom.TeamHub: one statement, from arrays; a
// record the hub holds is skipped, so that a push sent again, or sent
// through two hub processes at once, stores each record once.
func (s *Store) PutTeamRecords(ctx context.Context, team string, recs []loom.SyncRecord) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	hosts := make([]string, len(recs))
	idxs := make([]int64, len(recs))
	epochs := make([]int32, len(recs))
	headers := make([][]byte, len(recs))
	bodies := make([][]byte, len(recs))
	for i, r := range recs {
		hosts[i], idxs[i], epochs[i], headers[i], bodies[i] = r.Host, r.Index, int32(r.Epoch), r.Header, r.Body
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO team_records (team_id, host_id, idx, epoch, header, body, received_at)
		SELECT $1::text, r.host, r.idx, r.epoch, r.header, r.body, now()
		FROM unnest($2::text[], $3::bigint[], $4::int[], $5::bytea[], $6::bytea[]) AS r (host, idx, epoch, header, body)
		ON CONFLICT DO NOTHING`, team, hosts, idxs, epochs, headers, bodies)
	if err != nil {
		return 0, fmt.Errorf("team %s: records: %w", team, serverError(err))
	}
	return int(tag.RowsAffected()), nil
}

// TeamRecords implements loom.TeamHub. The rows are read one at a time
// and the page cut at loom.MaxSyncPageBytes, as a page of sync records
// is: a page never holds a thousand bodies of 16 MB.
func (s *Store) TeamRecords(ctx context.Context, team, host string, after int64, limit int) ([]loom.SyncRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT host_id, idx, epoch, header, body FROM team_records
		WHERE team_id = $1 AND host_id = $2 AND idx > $3 ORDER BY idx LIMIT $4`, team, host, after, limit)
	if err != nil {
		return nil, fmt.Errorf("team %s: records: %w", team, err)
	}
	defer rows.Close()
	var out []loom.SyncRecord
	var size int64
	for rows.Next() {
		var t loom.SyncRecord
		var epoch int32
		if err := rows.Scan(&t.Host, &t.Index, &epoch, &t.Header, &t.Body); err != nil {
			return nil, fmt.Errorf("team %s: records: %w", team, err)
		}
		t.Epoch = int(epoch)
		size += int64(len(t.Header) + len(t.Body))
		if len(out) > 0 && size > loom.MaxSyncPageBytes {
			return out, nil
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("team %s: records: %w", team, err)
	}
	return out, nil
}

// TeamLast implements loom.TeamHub: one probe of the primary key.
func (s *Store) TeamLast(ctx context.Context, team, host string) (int64, error) {
	var last int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(idx), 0) FROM team_records WHERE team_id = $1 AND host_id = $2`, team, host).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("team %s: writer %s: %w", team, host, err)
	}
	return last, nil
}

// TeamHosts implements loom.TeamHub.
func (s *Store) TeamHosts(ctx context.Context, team string) ([]loom.SyncHost, error) {
	rows, err := s.pool.Query(ctx, `SELECT host_id, max(idx), count(*), sum(length(body))::bigint FROM team_records
		WHERE team_id = $1 GROUP BY host_id ORDER BY host_id`, team)
	if err != nil {
		return nil, fmt.Errorf("team %s: hosts: %w", team, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (loom.SyncHost, error) {
		var h loom.SyncHost
		err := r.Scan(&h.Host, &h.Last, &h.Records, &h.Bytes)
		return h, err
	})
}

// TeamLasts implements loom.TeamHub: the team's writers, one index probe
// each (a skip over the primary key), and each one's last index, another:
// a few hundred probes for a few hundred writers, whatever the number
// of records.
func (s *Store) TeamLasts(ctx context.Context, team string) ([]loom.SyncHost, error) {
	rows, err := s.pool.Query(ctx, `WITH RECURSIVE w (host_id) AS (
			(SELECT host_id FROM team_records WHERE team_id = $1 ORDER BY host_id LIMIT 1)
			UNION ALL
			SELECT (SELECT r.host_id FROM team_records r WHERE r.team_id = $1 AND r.host_id > w.host_id ORDER BY r.host_id LIMIT 1)
			FROM w WHERE w.host_id IS NOT NULL)
		SELECT w.host_id, (SELECT max(r.idx) FROM team_records r WHERE r.team_id = $1 AND r.host_id = w.host_id)
		FROM w WHERE w.host_id IS NOT NULL ORDER BY w.host_id`, team)
	if err != nil {
		return nil, fmt.Errorf("team %s: hosts: %w", team, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (loom.SyncHost, error) {
		var h loom.SyncHost
		err := r.Scan(&h.Host, &h.Last)
		return h, err
	})
}

// ClaimTeamRecords implements loom.TeamHub: each key's newest head is
// read under a row lock (keys in order, so that two pushes lock them
// alike), the tags not held are filed, and the heads moved forward, in
// one transaction that files nothing when a claim is refused.
func (s *Store) ClaimTeamRecords(ctx context.Context, team string, claims []loom.TeamClaim) error {
	if len(claims) == 0 {
		return nil
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("team %s: claims: %w", team, err)
	}
	defer tx.Rollback(ctx)
	var authors []string
	newest := map[string]int64{}
	for _, c := range claims {
		if _, ok := newest[c.Author]; !ok {
			authors = append(authors, c.Author)
			newest[c.Author] = -1
		}
	}
	sort.Strings(authors)
	for _, a := range authors {
		var prior int64
		err := tx.QueryRow(ctx, `SELECT seq FROM team_heads WHERE team_id = $1 AND author = $2 FOR UPDATE`, team, a).Scan(&prior)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("team %s: heads: %w", team, err)
		}
		if err == nil {
			newest[a] = prior
		}
	}
	tags := make([]string, 0, len(claims))
	owners := make([]string, 0, len(claims))
	var provenTags, provenOwners []string
	var back *loom.TeamClaimError
	for _, c := range claims {
		if c.Seq < newest[c.Author] && back == nil {
			back = &loom.TeamClaimError{Claim: c, Prior: newest[c.Author]}
		}
		newest[c.Author] = max(newest[c.Author], c.Seq)
		tags, owners = append(tags, c.Session), append(owners, c.Owner)
		if c.Proven && !slices.Contains(provenTags, c.Session) {
			provenTags, provenOwners = append(provenTags, c.Session), append(provenOwners, c.Owner)
		}
	}
	// A claim its session's first record proves is filed over the row
	// (given to another by hand); the others only where none is.
	if len(provenTags) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO team_sessions (team_id, tag, owner)
			SELECT $1::text, c.tag, c.owner FROM unnest($2::text[], $3::text[]) AS c (tag, owner)
			ON CONFLICT (team_id, tag) DO UPDATE SET owner = EXCLUDED.owner`, team, provenTags, provenOwners); err != nil {
			return fmt.Errorf("team %s: sessions: %w", team, err)
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO team_sessions (team_id, tag, owner)
		SELECT $1::text, c.tag, c.owner FROM unnest($2::text[], $3::text[]) AS c (tag, owner)
		ON CONFLICT DO NOTHING`, team, tags, owners); err != nil {
		return fmt.Errorf("team %s: sessions: %w", team, err)
	}
	rows, err := tx.Query(ctx, `SELECT tag, owner FROM team_sessions WHERE team_id = $1 AND tag = ANY($2::text[])`, team, tags)
	if err != nil {
		return fmt.Errorf("team %s: sessions: %w", team, err)
	}
	held := map[string]string{}
	for rows.Next() {
		var tag, owner string
		if err := rows.Scan(&tag, &owner); err != nil {
			rows.Close()
			return fmt.Errorf("team %s: sessions: %w", team, err)
		}
		held[tag] = owner
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("team %s: sessions: %w", team, err)
	}
	// Whose a session is says more than a head: it is said first.
	for _, c := range claims {
		if o := held[c.Session]; o != c.Owner {
			return &loom.TeamClaimError{Claim: c, Owner: o}
		}
	}
	if back != nil {
		return back
	}
	seqs := make([]int64, len(authors))
	for i, a := range authors {
		seqs[i] = newest[a]
	}
	if _, err := tx.Exec(ctx, `INSERT INTO team_heads (team_id, author, seq)
		SELECT $1::text, h.author, h.seq FROM unnest($2::text[], $3::bigint[]) AS h (author, seq)
		ON CONFLICT (team_id, author) DO UPDATE SET seq = GREATEST(team_heads.seq, EXCLUDED.seq)`, team, authors, seqs); err != nil {
		return fmt.Errorf("team %s: heads: %w", team, err)
	}
	return tx.Commit(ctx)
}

// TeamUsage implements loom.TeamHub: a range of the primary key for
// each key's writer ids (key-… sorts before key. in collation "C"), so
// that it reads one member's records and no other's.
func (s *Store) TeamUsage(ctx context.Context, team string, keys []string) (records, bytes int64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(length(r.header) + length(r.body)), 0)::bigint
		FROM unnest($2::text[]) AS k (key), team_records r
		WHERE r.team_id = $1 AND r.host_id >= k.key || '-' AND r.host_id < k.key || '.'`, team, keys).Scan(&records, &bytes)
	if err != nil {
		return 0, 0, fmt.Errorf("team %s: usage: %w", team, err)
	}
	return records, bytes, nil
}

// TeamSums implements loom.TeamHub: each row's sum is a column PostgreSQL
// makes as the row is written or edited (migration 0021, as
// loom.TeamRecordSum makes it), so that an audit reads 40 bytes a record
// off the table, never the records' bytes.
func (s *Store) TeamSums(ctx context.Context, team, host string, after int64) ([]loom.TeamSum, error) {
	rows, err := s.pool.Query(ctx, `SELECT idx, sum FROM team_records
		WHERE team_id = $1 AND host_id = $2 AND idx > $3 ORDER BY idx`, team, host, after)
	if err != nil {
		return nil, fmt.Errorf("team %s: writer %s: sums: %w", team, host, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (loom.TeamSum, error) {
		var x loom.TeamSum
		err := r.Scan(&x.Index, &x.Sum)
		return x, err
	})
}

// TeamSessionRecords implements loom.TeamHub: a range of the index of
// records by the session tag their header names (migration 0023).
func (s *Store) TeamSessionRecords(ctx context.Context, team, tag string, limit int) ([]loom.SyncRecord, error) {
	rows, err := s.pool.Query(ctx, `SELECT host_id, idx, epoch, header, body FROM team_records
		WHERE team_id = $1 AND team_record_session(header) = $2 ORDER BY received_at, host_id, idx LIMIT $3`, team, tag, limit)
	if err != nil {
		return nil, fmt.Errorf("team %s: session %s: records: %w", team, tag, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (loom.SyncRecord, error) {
		var t loom.SyncRecord
		var epoch int32
		err := r.Scan(&t.Host, &t.Index, &epoch, &t.Header, &t.Body)
		t.Epoch = int(epoch)
		return t, err
	})
}

// RestoreTeamRecord implements loom.TeamHub.
func (s *Store) RestoreTeamRecord(ctx context.Context, team string, rec loom.SyncRecord) error {
	_, err := s.pool.Exec(ctx, `UPDATE team_records SET epoch = $4, header = $5, body = $6
		WHERE team_id = $1 AND host_id = $2 AND idx = $3`, team, rec.Host, rec.Index, int32(rec.Epoch), rec.Header, rec.Body)
	if err != nil {
		return fmt.Errorf("team %s: writer %s: record %d: %w", team, rec.Host, rec.Index, serverError(err))
	}
	return nil
}

var _ loom.TeamHub = (*Store)(nil)
