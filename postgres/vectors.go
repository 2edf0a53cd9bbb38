package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"
)

// vectorChunk is how many bodies' search vectors one query computes.
const vectorChunk = 1000

// maxVectorConns is the most connections besides its own an import uses
// to compute search vectors.
const maxVectorConns = 2

// vectorsSQL computes the search vectors of its texts in the binary form
// COPY reads back, each with its text's position (from 1): a function
// scan returns them in order, which vectorsOf checks rather than pay for
// a sort. The expression is the one the bodies_search trigger uses, so a
// vector computed here is the vector the trigger would have stored.
const vectorsSQL = `SELECT i, tsvectorsend(to_tsvector('english'::regconfig, loom_search_text(t)))
	FROM unnest($1::text[]) WITH ORDINALITY AS u(t, i)`

// vectors computes the search vectors of texts on other connections of
// a pool while an import writes everything else. Computing a vector
// (PostgreSQL's parser and stemmer) is most of an import's work; done on
// the importing connection alone it bounds an import to one core of the
// server. The texts are split into chunks that helpers claim in order;
// the importing side, when it reaches a chunk no helper has claimed,
// claims it itself and leaves its vectors to the insert trigger, so an
// import never waits for a connection the pool cannot give.
type vectors struct {
	texts  []string
	next   atomic.Int64    // the first chunk not yet claimed
	ready  []chan struct{} // closed when a chunk's vectors are in vecs, or never will be
	vecs   [][][]byte      // per chunk, the vectors of its texts; nil: left to the trigger
	errs   []error         // per chunk, why its vectors could not be computed
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// computeVectors starts computing the vectors of texts on up to conns
// connections of pool. stop must be called when they are no longer
// needed.
func computeVectors(ctx context.Context, pool *pgxpool.Pool, texts []string, conns int) *vectors {
	n := (len(texts) + vectorChunk - 1) / vectorChunk
	v := &vectors{texts: texts, ready: make([]chan struct{}, n), vecs: make([][][]byte, n), errs: make([]error, n)}
	for i := range v.ready {
		v.ready[i] = make(chan struct{})
	}
	ctx, v.cancel = context.WithCancel(ctx)
	for range min(conns, n) {
		v.wg.Go(func() { v.help(ctx, pool) })
	}
	return v
}

// help computes claimed chunks on one connection of pool until none is
// left.
func (v *vectors) help(ctx context.Context, pool *pgxpool.Pool) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return // the importing side computes what no helper claims
	}
	defer conn.Release()
	for {
		i := int(v.next.Add(1) - 1)
		if i >= len(v.ready) {
			return
		}
		v.vecs[i], v.errs[i] = vectorsOf(ctx, conn, v.texts[i*vectorChunk:min((i+1)*vectorChunk, len(v.texts))])
		close(v.ready[i])
		if v.errs[i] != nil {
			return
		}
	}
}

// vectorsOf computes the vectors of texts on conn.
func vectorsOf(ctx context.Context, conn *pgxpool.Conn, texts []string) ([][]byte, error) {
	rows, err := conn.Query(ctx, vectorsSQL, texts)
	if err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	defer rows.Close()
	vecs := make([][]byte, 0, len(texts))
	for rows.Next() {
		var i int64
		var vec []byte
		if err := rows.Scan(&i, &vec); err != nil {
			return nil, fmt.Errorf("search vectors: %w", err)
		}
		if i != int64(len(vecs)+1) {
			return nil, fmt.Errorf("search vectors: text %d came as %d", len(vecs)+1, i)
		}
		vecs = append(vecs, vec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("search vectors: %d for %d texts", len(vecs), len(texts))
	}
	return vecs, nil
}

// chunk returns the vectors of chunk i, waiting for the helper computing
// them, or nil when no helper claimed it: the trigger computes them.
func (v *vectors) chunk(ctx context.Context, i int) ([][]byte, error) {
	if v.next.CompareAndSwap(int64(i), int64(i+1)) {
		return nil, nil // no helper got to it: the trigger computes them
	}
	return v.wait(ctx, i)
}

// wait waits for a helper to compute the vectors of chunk i.
func (v *vectors) wait(ctx context.Context, i int) ([][]byte, error) {
	select {
	case <-v.ready[i]:
		return v.vecs[i], v.errs[i]
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stop ends the helpers and waits for them.
func (v *vectors) stop() {
	v.cancel()
	v.wg.Wait()
}

// bodyCopy is the bodies of an import as COPY's binary format reads
// them: id, parts, content and search, the content the texts of vs and
// the search their vectors. It is produced a chunk at a time, as the
// vectors of each become ready.
type bodyCopy struct {
	ctx    context.Context
	ids    []int64
	parts  []string
	vs     *vectors
	next   int // the next chunk to produce; len(vs.ready) is the trailer
	buf    []byte
	off    int
	header bool
}

const bodyCopySQL = `COPY bodies (id, parts, content, search) FROM STDIN (FORMAT binary)`

// Read implements io.Reader.
func (b *bodyCopy) Read(p []byte) (int, error) {
	for b.off == len(b.buf) {
		b.buf, b.off = b.buf[:0], 0
		if !b.header {
			// Signature, flags, header extension length.
			b.buf = append(b.buf, "PGCOPY\n\xff\r\n\x00"...)
			b.buf = binary.BigEndian.AppendUint32(b.buf, 0)
			b.buf = binary.BigEndian.AppendUint32(b.buf, 0)
			b.header = true
		}
		switch n := len(b.vs.ready); {
		case b.next > n:
			return 0, io.EOF
		case b.next == n:
			b.buf = binary.BigEndian.AppendUint16(b.buf, 0xffff) // trailer
		default:
			vecs, err := b.vs.chunk(b.ctx, b.next)
			if err != nil {
				return 0, err
			}
			start := b.next * vectorChunk
			for j := start; j < min(start+vectorChunk, len(b.vs.texts)); j++ {
				b.buf = binary.BigEndian.AppendUint16(b.buf, 4)
				b.buf = binary.BigEndian.AppendUint32(b.buf, 8)
				b.buf = binary.BigEndian.AppendUint64(b.buf, uint64(b.ids[j]))
				b.buf = appendField(b.buf, b.parts[j])
				b.buf = appendField(b.buf, b.vs.texts[j])
				if vecs == nil {
					b.buf = binary.BigEndian.AppendUint32(b.buf, 0xffffffff) // NULL
				} else {
					b.buf = appendField(b.buf, vecs[j-start])
				}
			}
		}
		b.next++
	}
	n := copy(p, b.buf[b.off:])
	b.off += n
	return n, nil
}

// appendField appends a field of COPY's binary format: its length and its
// bytes. json and text are sent as their text.
func appendField[T string | []byte](buf []byte, v T) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(v)))
	return append(buf, v...)
}

// vectorConns is how many connections of pool besides its own an import
// of n bodies uses to compute their vectors.
func vectorConns(pool *pgxpool.Pool, n int) int {
	if n < 2*vectorChunk {
		return 0 // not worth another connection
	}
	return max(0, min(maxVectorConns, int(pool.Config().MaxConns)-1))
}
