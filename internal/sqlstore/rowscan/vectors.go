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
