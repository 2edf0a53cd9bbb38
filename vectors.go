package loom

import "context"

// VectorStore is a Store that keeps embedding vectors of its messages'
// bodies, for search by meaning (docs/search.md, "Ranking by meaning").
// Vectors are derived data: never synced, never exported, rebuilt when
// the model that made them changes. Each engine keeps them in a table of
// its own next to its full-text index; a body's vector goes when the
// body goes or its text changes.
type VectorStore interface {
	VectorReader
	// UseVectorModel makes model the one whose vectors the store keeps:
	// when those it holds were made with another, they are all deleted
	// first, in one transaction, and embedding starts over.
	UseVectorModel(ctx context.Context, model string) error
	// ClaimVectors makes the caller the one process that embeds this
	// store, until release is called or the process ends (a process
	// killed leaves no claim behind). ok is false when another live
	// process holds the claim.
	ClaimVectors(ctx context.Context) (release func(), ok bool, err error)
	// PutVectors stores vecs and moves the high-water mark to upTo, in
	// one transaction, provided model is still the store's vector model
	// (EINVALID otherwise: the model changed meanwhile).
	PutVectors(ctx context.Context, model string, upTo int64, vecs []Vector) error
}

// VectorReader reads what a VectorStore keeps: the reads of search by
// meaning, and the texts to embed.
type VectorReader interface {
	// Unembedded returns up to n bodies with text that have no vector
	// yet, in order, their text cut to maxChars characters. upTo is the
	// last body looked at: PutVectors with it moves the store's
	// high-water mark past it, so that the next call starts after it.
	Unembedded(ctx context.Context, n, maxChars int) (chunks []Chunk, upTo int64, err error)
	// Vectors calls fn with each stored vector, and returns the model
	// that made them ("" when there are none).
	Vectors(ctx context.Context, fn func(Vector) error) (model string, err error)
	// VectorHits turns bodies found by meaning into the hits of q: the
	// messages holding them that pass q's filters (user, session,
	// project, surface, role, time, archived), in the order of ids,
	// scored by scores (ids[i] has scores[i]), at most q.Limit.
	VectorHits(ctx context.Context, q SearchQuery, ids []int64, scores []float64) ([]SearchHit, error)
	// VectorStatus says how far embedding has come.
	VectorStatus(ctx context.Context) (VectorStatus, error)
}

// Chunk is the text of one message body, to embed.
type Chunk struct {
	ID   int64
	Text string
}

// Vector is the embedding of one message body, as the store keeps it
// (see package vecindex for the encoding).
type Vector struct {
	ID   int64
	Data []byte
}

// VectorStatus says how far embedding a store has come.
type VectorStatus struct {
	Model string `json:"model"`
	// Vectors is how many bodies have a vector; Pending how many with
	// text have none yet.
	Vectors int64 `json:"vectors"`
	Pending int64 `json:"pending"`
}

// TierMeaning marks a hit found by meaning alone: its message is among
// those whose vectors are nearest the query's, and holds none of its
// words, or none that keyword search ranked.
const TierMeaning = "meaning"
