// Package sqlite is loom's embedded storage engine: one SQLite file in WAL
// mode with STRICT tables and an FTS5 index, written by one connection and
// read by a pool.
//
// Its write transaction serves every role of sessionstore.Tx, the
// store's and sync's, each step one statement or scan of SQLite's SQL
// (the number is the role's methods):
//
//	SessionSteps 12, BodySteps 9, ForkSteps 8 (ForkReads 5 of them),
//	TrashSteps 6, ImportSteps 4, PromptTx 1, Ender 1;
//	LogRows 12 (the sync log's opaque rows: the records are
//	sessionstore.SyncLog's to build), ApplySteps 8, MergeSteps 9,
//	LineageSteps 6, StampSteps 8, KeySteps 4, FragmentSteps 3,
//	HistorySteps 2.
//
// Beside it: sessionstore.Engine (12 methods: Begin, Now, BeginPut,
// Locker 5, Grants 4), sessionstore.ReplicaEngine (Begin), SyncTx 3 with
// PutWrites 4, LockTx 2 with LockWrites 3. docs/architecture.md says what
// each role is.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomhq/loom/sessionstore"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/sqlstore/rowscan"
	"github.com/loomhq/loom/synclog"
)

// Store is a loom.Store on one SQLite file: its writes are
// sessionstore's, over this engine's transactions (engine), and its
// reads are its own.
type Store struct {
	*sessionstore.Store
	*sessionstore.Replica

	path   string
	writer *sql.DB // one connection, immediate transactions
	reader *sql.DB // query-only pool

	// Now returns the current time; tests replace it.
	Now func() time.Time
	// LeaseTTL is how long this handle's locks stay trusted by handles
	// on other hosts without renewal (loom.LeaseTTL unless set before
	// the first Lock).
	LeaseTTL time.Duration

	holder sessionstore.Holder // whose locks this handle's are

	stmts  sync.Map  // query text → *sql.Stmt on the reader pool
	wstmts sync.Map  // query text → *sql.Stmt on the writer
	wonce  sync.Once // hotWrites prepared
	fonce  sync.Once // forkWrites prepared

	// clock stamps this handle's sync records (see syncing.go).
	clock *synclog.Clock
	// host is this store's sync host id once a transaction has found it.
	host atomic.Pointer[synclog.HostID]

	// readOnly is set when the file was opened read-only (ModeRead on a
	// file this process cannot write): every write fails at once.
	readOnly bool

	// ckpt copies imports' commits into the database file beside the
	// writer (checkpoint.go); bulk says the writer's transaction is an
	// import's.
	ckpt checkpointer
	bulk atomic.Bool
}

// The compiler checks that a Store is all three.
var (
	_ loom.Store          = (*Store)(nil)
	_ loom.TokenStore     = (*Store)(nil)
	_ loom.SyncStore      = (*Store)(nil)
	_ loom.ActivityReader = (*Store)(nil)
)

// Mode says what Open may do to the file: create it, write it, or only
// read it.
type Mode int

const (
	// ModeCreate opens the file for reading and writing, creating it
	// (and its directory) when missing. It is what Open does.
	ModeCreate Mode = iota
	// ModeWrite opens a file that must exist, for reading and writing.
	ModeWrite
	// ModeRead opens a file that must exist and never creates one. A
	// file this process may write is opened as ModeWrite opens it (and
	// migrated if need be); one it may not write (the file or its
	// directory is read-only, or the file system is) is opened
	// read-only, and every write then fails with EINVALID.
	ModeRead
)

// Open opens (creating when missing) the store at path, which may be a
// file path or a "sqlite:PATH" / "file:PATH" URL, and brings its schema up
// to date. Options set how its writes go (sessionstore.Redacting).
func Open(ctx context.Context, path string, opts ...sessionstore.Option) (*Store, error) {
	return OpenMode(ctx, path, ModeCreate, opts...)
}

// OpenMode opens the store at path as mode says. A missing file (with
// ModeWrite or ModeRead) is an ENOTFOUND error saying so, naming a
// missing directory; a file that cannot be written (with ModeCreate or
// ModeWrite) is an EINVALID error saying which.
func OpenMode(ctx context.Context, path string, mode Mode, opts ...sessionstore.Option) (*Store, error) {
	path = FilePath(path)
	if path == "" {
		return nil, loom.Errorf(loom.EINVALID, "empty database path")
	}
	dir := filepath.Dir(path)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		switch {
		case mode == ModeCreate:
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("create database directory: %w", err)
			}
		case !exists(dir):
			return nil, loom.Errorf(loom.ENOTFOUND, "no store at %s (directory %s does not exist)", path, dir)
		default:
			return nil, loom.Errorf(loom.ENOTFOUND, "no store at %s", path)
		}
	}
	readOnly := false
	if why := unwritable(path); why != "" {
		if mode != ModeRead {
			return nil, loom.Errorf(loom.EINVALID, "cannot write %s: %s", path, why)
		}
		readOnly = true
	}
	s := &Store{
		path:     path,
		Now:      loom.Now,
		LeaseTTL: loom.LeaseTTL,
		holder:   sessionstore.NewHolder(),
		readOnly: readOnly,
	}
	s.clock = synclog.NewClock(func() time.Time { return s.Now() }, 0)
	s.Store = sessionstore.New(engine{s}, opts...)
	s.Replica = sessionstore.NewReplica(engine{s})
	if readOnly {
		if err := s.openReadOnly(); err != nil {
			return nil, err
		}
	} else if err := s.openReadWrite(); err != nil {
		return nil, err
	}
	if err := s.migrateNew(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// migrateNew migrates the store, trying again for a while when SQLite
// says it is busy. Processes that create a new store at once all switch
// it to WAL, which needs the file alone, and SQLite answers SQLITE_BUSY
// at once, without its busy timeout, to one that would otherwise wait on
// another in a deadlock. Once the file is in WAL mode this never recurs.
func (s *Store) migrateNew(ctx context.Context) error {
	const tries = 50
	pause := 5 * time.Millisecond
	for i := 1; ; i++ {
		err := s.migrate(ctx)
		if !isBusy(err) || i == tries {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// FilePath returns the file a store URL names: a path, or sqlite:PATH,
// sqlite://PATH or file:PATH, without any ?query.
func FilePath(url string) string {
	path := strings.TrimPrefix(url, "sqlite://")
	path = strings.TrimPrefix(path, "sqlite:")
	path = strings.TrimPrefix(path, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	return path
}

// openReadWrite opens the writer connection and the reader pool.
func (s *Store) openReadWrite() error {
	var err error
	// busy_timeout comes first so that the pragmas after it wait for a
	// busy database instead of failing.
	common := "_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(ON)"
	// The writer keeps its temporary files in memory (temp_store): the
	// statement journals of a write transaction's statements (each insert
	// that fires the search index's triggers has one) went to a file in
	// /var/tmp, a write system call for each page, as many writes as the
	// WAL's own in an import (docs/performance.md). A journal lasts one
	// statement, so what it holds is bounded by one statement's pages.
	// Its page cache is 16 MB, a reader's too. A writer's cache of 64 MB
	// kept the pages a batch of 500 sessions changes in a store of 24,000
	// (a page of each of a dozen indexes whose keys come in no order, for
	// each session) and made the import's growth linear, but raised the
	// peak memory of a process holding several stores past what the
	// search's memory bound allows (docs/performance.md, "Import
	// growth"): not kept.
	if s.writer, err = sql.Open(driverName, dsn(s.path, common+"&_pragma=cache_size(-16000)&_pragma=temp_store(MEMORY)&_txlock=immediate")); err != nil {
		return fmt.Errorf("open %s: %w", s.path, err)
	}
	s.writer.SetMaxOpenConns(1)
	s.writer.SetConnMaxIdleTime(0)
	// A reader sets only what reads need: WAL is a property of the file
	// (the writer sets it), and synchronous and foreign_keys matter to
	// writes alone. Each pragma is a statement run on every new
	// connection, and a process that opens the store to read one session
	// (loom run, a hook, an MCP call) opens one. No mmap: unmapping it
	// on close cost such a process more than it saved.
	if s.reader, err = sql.Open(driverName, dsn(s.path, "_pragma=busy_timeout(30000)&_pragma=query_only(1)&_pragma=cache_size(-16000)")); err != nil {
		s.writer.Close()
		return fmt.Errorf("open %s: %w", s.path, err)
	}
	s.reader.SetMaxOpenConns(max(4, runtime.NumCPU()))
	s.reader.SetMaxIdleConns(max(4, runtime.NumCPU()))
	return nil
}

// openReadOnly opens a file this process cannot write, creating nothing
// beside it. While a -wal file exists a writer may be at work (or died
// leaving committed pages there), so the file is read through the WAL
// with mode=ro, which needs the -shm to be there too. Without a -wal
// file no connection has the database open in WAL mode, and any writer
// would first have to create one: immutable=1 then reads the main file
// alone, without the locking files a read-only directory or file system
// could not hold, and without creating -wal and -shm files that, made
// with the database's read-only permissions, would later stop its owner
// from writing it. The one risk, a writer with more rights starting and
// checkpointing during this read, costs at most this read, never the
// file. The pool doubles as the writer so that DB() still reads.
func (s *Store) openReadOnly() error {
	params := "_pragma=busy_timeout(30000)&_pragma=query_only(1)&mode=ro"
	if !exists(s.path + "-wal") {
		params += "&immutable=1"
	}
	db, err := sql.Open(driverName, dsn(s.path, params))
	if err != nil {
		return fmt.Errorf("open %s: %w", s.path, err)
	}
	db.SetMaxOpenConns(max(4, runtime.NumCPU()))
	db.SetMaxIdleConns(max(4, runtime.NumCPU()))
	s.reader, s.writer = db, db
	return nil
}

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.readOnly }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func dsn(path, params string) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + params
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// DB returns the write connection, for tools that need SQL the Store does
// not offer (the benchmark's baseline, integrity checks).
func (s *Store) DB() *sql.DB { return s.writer }

// Close closes both pools.
func (s *Store) Close() error {
	errs := []error{s.ckpt.stop()}
	for _, m := range []*sync.Map{&s.stmts, &s.wstmts} {
		m.Range(func(_, v any) bool {
			v.(*sql.Stmt).Close()
			return true
		})
	}
	if s.reader != nil {
		errs = append(errs, s.reader.Close())
	}
	if s.writer != nil && s.writer != s.reader {
		errs = append(errs, s.writer.Close())
	}
	return errors.Join(errs...)
}

// begin starts an immediate write transaction, which holds SQLite's
// one write lock.
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	if s.readOnly {
		return nil, loom.Errorf(loom.EINVALID, "cannot write %s: it is open read-only", s.path)
	}
	s.prepareWrites(ctx, &s.wonce, hotWrites)
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.full(fmt.Errorf("begin: %w", err))
	}
	if s.autocheckpointAgain() {
		if _, err := tx.ExecContext(ctx, `PRAGMA wal_autocheckpoint = `+strconv.Itoa(walAutocheckpoint)); err != nil {
			tx.Rollback()
			s.checkpointBehind()
			return nil, s.full(fmt.Errorf("begin: %w", err))
		}
	}
	return tx, nil
}

// withTx runs fn in one immediate write transaction.
func (s *Store) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after a panic in fn; a no-op once ended
	return writes{s, tx}.End(fn(tx))
}

// End implements sessionstore.Ender: a full disk is ENOSPACE.
func (w writes) End(err error) error {
	if w.s.bulk.Swap(false) {
		defer func() {
			w.s.caughtUp()
			w.s.checkpointBehind()
		}()
	}
	if err != nil {
		w.tx.Rollback()
		return w.s.full(err)
	}
	if err := w.tx.Commit(); err != nil {
		return w.s.full(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// full returns err as loom.ENOSPACE when it is SQLite finding no room
// to write the store (isFull), else err as it is.
func (s *Store) full(err error) error {
	if err == nil || !isFull(err) || loom.ErrorCode(err) == loom.ENOSPACE {
		return err
	}
	return loom.OutOfSpace(err, "cannot write %s: its disk is full; free some space there, then try again", s.path)
}

// engine is the store as sessionstore's writes take it.
type engine struct{ s *Store }

// Begin implements sessionstore.Engine and sessionstore.ReplicaEngine:
// an immediate transaction, which holds SQLite's one write lock, serving
// every role of sessionstore.Tx.
func (e engine) Begin(ctx context.Context) (sessionstore.Tx, error) {
	tx, err := e.s.begin(ctx)
	if err != nil {
		return sessionstore.Tx{}, err
	}
	return syncTx{writes{e.s, tx}}.steps(), nil
}

// BeginPut implements sessionstore.Engine: an immediate transaction,
// which holds SQLite's one write lock, so no other put sees a host's
// last index change under it.
func (e engine) BeginPut(ctx context.Context) (sessionstore.PutWrites, error) {
	tx, err := e.s.begin(ctx)
	if err != nil {
		return nil, err
	}
	return syncWrites{writes{e.s, tx}}, nil
}

// Now implements sessionstore.Engine.
func (e engine) Now() time.Time { return e.s.Now() }

// PrepareFork prepares the statements of a fork and of a rewind on the
// writer, once, before their transaction holds its one connection.
func (e engine) PrepareFork(ctx context.Context) { e.s.prepareWrites(ctx, &e.s.fonce, forkWrites) }

// LastTurn reads session id's last turn into r on a reader, outside
// any transaction (sessionstore.Store.RepairInterrupted).
func (e engine) LastTurn(ctx context.Context, id string, r *sessionstore.Repair) error {
	return lastTurn(ctx, reads(e), id, r)
}

// KeepsPurged reports, on a reader, whether the store keeps what one of
// its purges took of a session until its next sync (table
// sync_purge_kept, a row with Data): sessionstore.Replica.SyncForgetPurged
// then has something to let go.
func (e engine) KeepsPurged(ctx context.Context) (bool, error) {
	var keeps bool
	err := reads(e).QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sync_purge_kept WHERE instr(kept, '"Data":') > 0)`).Scan(&keeps)
	if err != nil {
		return false, fmt.Errorf("read what purges keep: %w", err)
	}
	return keeps, nil
}

func (s *Store) now() string { return loom.FormatTime(s.Now()) }

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return loom.FormatTime(*t)
}

// rowsOf lets the shared row readers (rowscan.All) query db.
type rowsOf struct{ db queryer }

// Query implements rowscan.Querier.
func (r rowsOf) Query(ctx context.Context, query string, args ...any) (rowscan.Result, error) {
	rows, err := r.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// sqlRows are *sql.Rows as rowscan.Result.
type sqlRows struct{ *sql.Rows }

// Close implements rowscan.Result; the error of closing rows read to the
// end is Err's.
func (r sqlRows) Close() { r.Rows.Close() }

// reads runs queries on the reader pool through prepared statements kept
// for the life of the store: parsing and planning a query costs about as
// much as running the hot ones.
type reads struct{ s *Store }

func (r reads) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := r.s.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := r.s.reader.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := r.s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// QueryContext implements queryer.
func (r reads) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := r.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext implements queryer.
func (r reads) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := r.stmt(ctx, query)
	if err != nil {
		// Let the error surface from Scan, as database/sql does.
		return r.s.reader.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// writes runs a write transaction's hot statements through statements
// prepared once on the single writer connection.
type writes struct {
	s  *Store
	tx *sql.Tx
}

// stmt returns the transaction's copy of a statement prepared before it
// began, or nil. Preparing inside the transaction would wait for the
// writer's one connection, which the transaction holds.
func (w writes) stmt(ctx context.Context, query string) *sql.Stmt {
	if st, ok := w.s.wstmts.Load(query); ok {
		return w.tx.StmtContext(ctx, st.(*sql.Stmt))
	}
	return nil
}

// prepareWrites prepares write statements qs on the writer, once for
// once, outside any transaction (the writer is one connection).
func (s *Store) prepareWrites(ctx context.Context, once *sync.Once, qs []string) {
	once.Do(func() {
		for _, q := range qs {
			if st, err := s.writer.PrepareContext(ctx, q); err == nil {
				s.wstmts.Store(q, st)
			}
		}
	})
}

// ExecContext runs a prepared write.
func (w writes) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := w.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return w.tx.ExecContext(ctx, query, args...)
}

// QueryContext implements queryer.
func (w writes) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := w.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return w.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext implements queryer.
func (w writes) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := w.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return w.tx.QueryRowContext(ctx, query, args...)
}
