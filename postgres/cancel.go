package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// keepOnCancel is how a connection of the store ends a statement whose
// context ends while it runs (a hook's recall at its deadline, a command
// interrupted): it asks the server to cancel it, as psql's Ctrl-C does,
// reads the server's error and keeps the connection. pgx's own way sets
// the socket's deadline to now, so the connection is closed and the next
// statement connects again, sets its connection up and prepares its
// statements afresh on a server process whose caches are cold: a hook
// whose recall was cut short made the next one miss its deadline too
// (docs/search.md, "a cancelled statement"). The cost is the caller's:
// the statement returns once the server has answered the cancel and pgx
// has waited 100 ms more, so that the request cannot end the
// connection's next statement instead. Only when the server has not
// answered within cancelGrace is the connection closed, as before.
func keepOnCancel(c *pgconn.PgConn) ctxwatch.Handler {
	return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelGrace}
}

// closeOnCancel is pgx's own way, for connections that hold session
// locks (hublocks.go): a lock statement cut short may still have taken
// its lock, and a closed connection frees it.
func closeOnCancel(c *pgconn.PgConn) ctxwatch.Handler {
	return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
}

// boundNear has the server end a statement by its context's deadline
// when that deadline is near (within boundHorizon when the connection is
// taken from the pool, as a hook's 100 ms are): the connection's
// statement_timeout is set to the time left, less boundMargin, so the
// server ends the statement itself, before the context ends, and the
// statement returns at its deadline with its connection kept, where a
// cancel request (keepOnCancel) returns 100 ms or more after it. It
// costs a statement with a near deadline one round trip more (SET), and
// the first statement without one on the same connection another (the
// server's default back). A statement with time to spare is not bounded:
// it needs no round trip more, and should its context end, keepOnCancel
// ends it.
func boundNear(ctx context.Context, c *pgx.Conn) (bool, error) {
	data := c.PgConn().CustomData()
	bounded, _ := data[boundedKey].(bool)
	ms, near := boundOf(ctx)
	sql := "SET statement_timeout TO DEFAULT"
	if near {
		sql = "SET statement_timeout = " + ms
	} else if !bounded {
		return true, nil
	}
	// Until the SET has answered, the connection's bound is not known.
	data[boundedKey] = true
	if _, err := c.Exec(ctx, sql); err != nil {
		return true, ended(ctx, err)
	}
	data[boundedKey] = near
	return true, nil
}

// boundOf is the statement_timeout, in milliseconds, that ends a
// statement starting now by ctx's deadline, and whether that deadline is
// near enough to be bounded so (boundNear).
func boundOf(ctx context.Context) (string, bool) {
	d, ok := ctx.Deadline()
	left := time.Until(d)
	if !ok || left > boundHorizon {
		return "", false
	}
	return strconv.FormatInt(max(int64((left-boundMargin)/time.Millisecond), 1), 10), true
}

// boundLocal is the SQL that bounds, as boundNear does, the statements of
// a transaction run after it, when ctx's deadline is near (nothing when
// not): the bound set when the transaction took its connection counts
// from then, so a statement after others in it would be ended later
// than its deadline, by a cancel request.
func boundLocal(ctx context.Context) string {
	if ms, near := boundOf(ctx); near {
		return "; SET LOCAL statement_timeout = " + ms
	}
	return ""
}

// boundedKey marks, in a connection's CustomData, a connection whose
// statement_timeout boundNear set.
const boundedKey = "loom.bounded"

// boundHorizon is how near a statement's deadline must be for the
// server to end it by then (boundNear); boundMargin is how much before
// the deadline it ends it, for its error to reach the caller by the
// deadline.
const (
	boundHorizon = 200 * time.Millisecond
	boundMargin  = 10 * time.Millisecond
)

// cancelGrace is how long a cancelled statement's connection waits for
// the server to end it before the connection is closed, and how long a
// transaction whose context ended may take to roll back.
const cancelGrace = time.Second

// connPool is the store's connection pool, whose statements' errors say,
// when the server ended a statement because its context ended (a cancel
// request: keepOnCancel), that the context ended, as pgx's own way does
// (errors.Is(err, context.DeadlineExceeded) and the context's cause),
// and whose transactions roll back when their context has ended too
// (pgx closes a connection whose rollback failed).
type connPool struct{ *pgxpool.Pool }

func (p *connPool) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := p.Pool.Exec(ctx, sql, args...)
	return tag, ended(ctx, err)
}

func (p *connPool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	r, err := p.Pool.Query(ctx, sql, args...)
	if err != nil {
		return r, ended(ctx, err)
	}
	return endedRows{r, ctx}, nil
}

func (p *connPool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return endedRow{p.Pool.QueryRow(ctx, sql, args...), ctx}
}

func (p *connPool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return endedBatch{p.Pool.SendBatch(ctx, b), ctx}
}

func (p *connPool) Begin(ctx context.Context) (pgx.Tx, error) {
	return p.BeginTx(ctx, pgx.TxOptions{})
}

func (p *connPool) BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error) {
	t, err := p.Pool.BeginTx(ctx, o)
	if err != nil {
		return nil, ended(ctx, err)
	}
	return endedTx{t}, nil
}

// endedTx is a transaction of connPool.
type endedTx struct{ pgx.Tx }

func (t endedTx) Begin(ctx context.Context) (pgx.Tx, error) {
	n, err := t.Tx.Begin(ctx)
	if err != nil {
		return nil, ended(ctx, err)
	}
	return endedTx{n}, nil
}

func (t endedTx) Commit(ctx context.Context) error {
	return ended(ctx, t.Tx.Commit(ctx))
}

// Rollback rolls back with cancelGrace when ctx has ended: a statement
// of the transaction cancelled by its context leaves it to be rolled
// back on a connection that is kept.
func (t endedTx) Rollback(ctx context.Context) error {
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), cancelGrace)
		defer cancel()
	}
	return t.Tx.Rollback(ctx)
}

func (t endedTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := t.Tx.Exec(ctx, sql, args...)
	return tag, ended(ctx, err)
}

func (t endedTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	r, err := t.Tx.Query(ctx, sql, args...)
	if err != nil {
		return r, ended(ctx, err)
	}
	return endedRows{r, ctx}, nil
}

func (t endedTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return endedRow{t.Tx.QueryRow(ctx, sql, args...), ctx}
}

func (t endedTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return endedBatch{t.Tx.SendBatch(ctx, b), ctx}
}

type endedRows struct {
	pgx.Rows
	ctx context.Context
}

func (r endedRows) Err() error { return ended(r.ctx, r.Rows.Err()) }

type endedRow struct {
	pgx.Row
	ctx context.Context
}

func (r endedRow) Scan(dest ...any) error { return ended(r.ctx, r.Row.Scan(dest...)) }

type endedBatch struct {
	pgx.BatchResults
	ctx context.Context
}

func (b endedBatch) Exec() (pgconn.CommandTag, error) {
	tag, err := b.BatchResults.Exec()
	return tag, ended(b.ctx, err)
}

func (b endedBatch) Query() (pgx.Rows, error) {
	r, err := b.BatchResults.Query()
	if err != nil {
		return r, ended(b.ctx, err)
	}
	return endedRows{r, b.ctx}, nil
}

func (b endedBatch) QueryRow() pgx.Row { return endedRow{b.BatchResults.QueryRow(), b.ctx} }

func (b endedBatch) Close() error { return ended(b.ctx, b.BatchResults.Close()) }

// ended returns err, the error of a statement run under ctx, as the
// error of ctx's end when ctx has ended and the server cancelled the
// statement (57014, query_canceled: keepOnCancel's request, or the
// server's statement_timeout as the context ran out).
func ended(ctx context.Context, err error) error {
	if err == nil || pgCode(err) != "57014" {
		return err
	}
	if d, ok := ctx.Deadline(); ok && ctx.Err() == nil && time.Until(d) <= 2*boundMargin {
		// The server's statement_timeout (boundNear), just before the
		// deadline: the statement ended with its context's time.
		<-ctx.Done()
	}
	if ctx.Err() == nil {
		return err
	}
	return &endedError{ctx: ctx.Err(), cause: context.Cause(ctx), err: err}
}

// endedError is a statement's error when its context ended.
type endedError struct{ ctx, cause, err error }

func (e *endedError) Error() string {
	return "statement stopped: " + e.cause.Error()
}

func (e *endedError) Unwrap() []error { return []error{e.ctx, e.cause, e.err} }
