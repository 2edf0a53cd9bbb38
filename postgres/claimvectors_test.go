package postgres_test

import (
	"context"
	"testing"
)

// Two stores in schemas of one database embed at once: the claim is a
// store's (its schema's), not the database's; a second claim on one
// store waits for the first to be let go.
func TestClaimVectorsPerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := open(t, freshSchema(t)), open(t, freshSchema(t))
	freeA, ok, err := a.ClaimVectors(ctx)
	if err != nil || !ok {
		t.Fatalf("claim a: %v %v", ok, err)
	}
	freeB, ok, err := b.ClaimVectors(ctx)
	defer freeB()
	if err != nil || !ok {
		freeA()
		t.Fatalf("a store in another schema is refused its claim while a's is held: %v %v", ok, err)
	}
	if free, ok, err := a.ClaimVectors(ctx); err != nil || ok {
		free()
		t.Fatalf("a second claim on a: %v %v, want refused", ok, err)
	}
	freeA()
	if free, ok, err := a.ClaimVectors(ctx); err != nil || !ok {
		t.Fatalf("a claim on a after it was let go: %v %v", ok, err)
	} else {
		free()
	}
}
