package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore"
)

var messageCopyColumns = []string{"session_id", "seq", "id", "role", "turn", "body_id",
	"model", "provider", "input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens",
	"cache_write_tokens", "cache_write_1h_tokens", "cost_usd", "api_calls", "compactions", "error", "created_at", "completed_at"}

// analyzeAfter is the size of an import (in sessions) after which the
// sessions table's statistics are refreshed.
const analyzeAfter = 1000

// importRows are the rows of an import, made in its transaction before
// they are written.
type importRows struct {
	data  []*loom.SessionData
	ids   []string
	total int
	// Each message's columns: its search text goes to the vectors, its
	// parts to the bodies, the rest to the messages.
	texts, parts []string
	msgs         [][]any
}

// prepareImport makes the rows of data, validated.
func prepareImport(data []*loom.SessionData) (*importRows, error) {
	p := &importRows{data: data, ids: make([]string, len(data))}
	for i, d := range data {
		p.ids[i] = d.Session.ID
		p.total += len(d.Messages)
	}
	p.texts = make([]string, 0, p.total)
	p.parts = make([]string, 0, p.total)
	p.msgs = make([][]any, 0, p.total)
	for _, d := range data {
		for _, m := range d.Messages {
			args, err := messageArgs(m)
			if err != nil {
				return nil, err
			}
			p.parts = append(p.parts, args[0].(string))
			p.texts = append(p.texts, args[1].(string))
			// messageArgs is (parts, content, session_id, seq, id, role,
			// turn, model, …); COPY wants body_id after turn, filled in
			// once the ids are known.
			row := make([]any, 0, len(messageCopyColumns))
			row = append(row, args[2:7]...)
			row = append(row, nil)
			p.msgs = append(p.msgs, append(row, args[7:]...))
		}
	}
	return p, nil
}

// ImportRows implements sessionstore.ImportSteps with importTx, of the
// rows prepareImport makes.
func (w *writeTx) ImportRows(ctx context.Context, data []*loom.SessionData) error {
	p, err := prepareImport(data)
	if err != nil {
		return err
	}
	return w.s.importTx(ctx, w.tx, p)
}

// importTx writes the rows of an import inside tx: sessions as one
// batch of statements, messages and bodies with COPY; the bodies'
// search vectors are computed meanwhile on other connections (see
// vectors).
func (s *Store) importTx(ctx context.Context, tx pgx.Tx, p *importRows) error {
	data, ids, total, msgs := p.data, p.ids, p.total, p.msgs
	rows, err := tx.Query(ctx, `SELECT id FROM sessions WHERE id = ANY($1::text[])`, ids)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	taken, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	for _, id := range ids {
		if slices.Contains(taken, id) {
			return loom.Errorf(loom.ECONFLICT, "session %s already exists", id)
		}
	}
	b := &pgx.Batch{}
	for _, d := range data {
		queueSession(b, d)
	}
	br := tx.SendBatch(ctx, b)
	for _, d := range data {
		if _, err := br.Exec(); err != nil {
			br.Close()
			if isUnique(err) {
				return loom.Errorf(loom.ECONFLICT, "import %s: another session already has key %q", d.Session.ID, d.Session.Key)
			}
			return fmt.Errorf("import %s: %w", d.Session.ID, err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if total == 0 {
		return nil
	}
	// The vectors take longest: they are started as soon as the
	// sessions are known to be new.
	vs := computeVectors(ctx, s.pool.Pool, p.texts, vectorConns(s.pool.Pool, total))
	defer vs.stop()
	// Body ids come from the column's own sequence, so that messages
	// can name them before COPY writes them.
	rows, err = tx.Query(ctx, `SELECT nextval(pg_get_serial_sequence('bodies', 'id')) FROM generate_series(1, $1::integer)`, total)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	bodyIDs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	for i, row := range msgs {
		row[5] = bodyIDs[i]
	}
	// Messages first: their bodies' vectors are being computed.
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"messages"}, messageCopyColumns, pgx.CopyFromRows(msgs)); err != nil {
		if isUnique(err) {
			return loom.Errorf(loom.ECONFLICT, "import: %s", serverMessage(err))
		}
		return fmt.Errorf("import: messages: %w", err)
	}
	bc := &bodyCopy{ctx: ctx, ids: bodyIDs, parts: p.parts, vs: vs}
	if _, err := tx.Conn().PgConn().CopyFrom(ctx, bc, bodyCopySQL); err != nil {
		return fmt.Errorf("import: bodies: %w", err)
	}
	return nil
}

// analyzeImported refreshes statistics an import of n sessions may have
// left behind, where autovacuum would only catch up a minute later, or
// never where it is off. Best effort: a role that may not analyze still
// imported.
func (s *Store) analyzeImported(ctx context.Context, n int) {
	if n >= analyzeAfter {
		// Lineage queries walk sessions_parent instead of guessing from
		// an empty table's statistics.
		s.pool.Exec(ctx, `ANALYZE sessions`)
	}
	// Without any statistics of messages the planner guesses some 150
	// messages per body, and costs a search's lookups of its matches so
	// high that it compiles the statement with JIT (0.2 s, for a search
	// that takes milliseconds). Without those of bodies, a broad search
	// cannot tell how common its common words are (fewMatches). With
	// those of a store a hundredth of its size (its first import, never
	// refreshed where autovacuum is off), the planner took words that are
	// in none of the newer messages for common ones and counted them by
	// reading the whole table. So each table is analyzed when it never
	// was, and again when it has grown past twice what was analyzed, as
	// autovacuum would sooner: a few times over a store's life (at a
	// million messages, 0.4 s each), one look at the statistics' counters
	// an import otherwise.
	// Sessions and spans likewise: without their statistics (autovacuum
	// off, or in its first minute) the planner walked every session of
	// the user for a listing by parent, and read spans whole for one by
	// text (TestHotQueriesPlannedOnKeys).
	// Originals likewise: without their statistics, the planner of a
	// statement prepared on an empty table took originals_tool (user_id,
	// tool) for the look-up of a file's chunks by path that an import
	// makes for each file it keeps, and kept that plan for the pool's
	// connection, walking every chunk of the user for each file; with
	// them it reads the primary key (an ANALYZE makes the prepared
	// statements plan again).
	// Without track_counts the counters read nothing, and every import
	// would analyze.
	rows, err := s.pool.Query(ctx, `SELECT t FROM unnest(ARRAY['sessions', 'spans', 'messages', 'bodies', 'originals']) t
		WHERE current_setting('track_counts')::bool AND (coalesce(pg_stat_get_last_analyze_time(t::regclass), pg_stat_get_last_autoanalyze_time(t::regclass)) IS NULL
			OR pg_stat_get_mod_since_analyze(t::regclass) > greatest(pg_stat_get_live_tuples(t::regclass) - pg_stat_get_mod_since_analyze(t::regclass), 1000))`)
	if err != nil {
		return
	}
	stale, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, table := range stale {
		s.pool.Exec(ctx, `ANALYZE `+pgx.Identifier{table}.Sanitize())
	}
}

func queueSession(b *pgx.Batch, d *loom.SessionData) {
	x := d.Session
	u := x.Usage
	tool, version, path := sqlstore.SourceColumns(x)
	b.Queue(`INSERT INTO sessions (id, user_id, key, surface, title, description,
		kind, parent_id, fork_turn, project_id, project_name, project_root, cwd, model, provider,
		profile, message_count, turn_count, summary_seq, last_prompt,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
		cache_write_1h_tokens, cost_usd, api_calls, compactions, created_at, updated_at, deleted_at, archived_at,
		git_branch, source_tool, source_version, source_path, team, member)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
			$21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39)`,
		x.ID, x.UserID, nullString(x.Key), x.Surface, x.Title, x.Description, x.Kind,
		nullString(x.ParentID), x.ForkTurn, x.Project.ID, x.Project.Name, x.Project.Root, x.Cwd,
		x.Model, x.Provider, x.Profile, x.MessageCount, x.TurnCount, x.SummarySeq, clean(x.LastPrompt),
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, u.CacheWrite1hTokens,
		u.CostUSD, u.APICalls, u.Compactions, ms(x.CreatedAt), ms(x.UpdatedAt), nullTime(x.DeletedAt), nullTime(x.ArchivedAt),
		clean(x.GitBranch), clean(tool), clean(version), clean(path), clean(x.Team), clean(x.Member))
}
