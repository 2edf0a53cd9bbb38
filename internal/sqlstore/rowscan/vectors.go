package rowscan

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
)

// Vectors is loom.VectorStore.Vectors for both engines: the model that
// made the vectors, read from model (the row of vector_state's model),
// then every vector of db's vectors table, each given to fn. An error of
// fn is returned as it is.
func Vectors(ctx context.Context, model Scanner, db Querier, fn func(loom.Vector) error) (string, error) {
	var m string
	if err := model.Scan(&m); err != nil {
		return "", fmt.Errorf("vectors: %w", err)
	}
	rows, err := db.Query(ctx, `SELECT body_id, vec FROM vectors`)
	if err != nil {
		return "", fmt.Errorf("vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v loom.Vector
		if err := rows.Scan(&v.ID, &v.Data); err != nil {
			return "", fmt.Errorf("vectors: %w", err)
		}
		if err := fn(v); err != nil {
			return "", err
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("vectors: %w", err)
	}
	return m, nil
}

// UnembeddedColumns are the columns of vector_state that Unembedded reads
// first: the mark and the highest body's id.
const UnembeddedColumns = `mark, (SELECT coalesce(max(id), 0) FROM bodies)`

// Unembedded is loom.VectorStore.Unembedded for both engines. It reads
// the mark and the highest body's id from state (a row of
// UnembeddedColumns), then runs q on db: the id and the text, cut to
// maxChars, of at most n bodies after the mark that have no vector, in
// id order, its arguments maxChars, the mark and n.
func Unembedded(ctx context.Context, state Scanner, db Querier, q string, n, maxChars int) ([]loom.Chunk, int64, error) {
	var mark, top int64
	if err := state.Scan(&mark, &top); err != nil {
		return nil, 0, fmt.Errorf("vectors: %w", err)
	}
	chunks, err := All(ctx, db, func(r Scanner) (loom.Chunk, error) {
		var c loom.Chunk
		err := r.Scan(&c.ID, &c.Text)
		return c, err
	}, q, maxChars, mark, n)
	if err != nil {
		return nil, 0, fmt.Errorf("vectors: %w", err)
	}
	if len(chunks) == n {
		return chunks, chunks[len(chunks)-1].ID, nil
	}
	// Every body after the mark up to top was looked at.
	upTo := max(top, mark)
	if len(chunks) > 0 {
		upTo = max(upTo, chunks[len(chunks)-1].ID)
	}
	return chunks, upTo, nil
}
