// Package semantic ranks search by meaning where an embeddings model is
// at hand: Embedder embeds a store's messages in the background, and
// Searcher fuses the keyword hits of a search with the nearest vectors'
// by reciprocal rank (docs/search.md, "Ranking by meaning").
package semantic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/vecindex"
)

// Bounds on what is embedded.
const (
	// DefaultBatch is how many chunks one request embeds.
	DefaultBatch = 32
	// MaxChunkChars is the most characters of a message embedded: a
	// message's text, reasoning and tool calls in the order the store
	// indexes them, so a long tool output counts up to what is left of
	// it. About 1,000 tokens, inside every embedding model's window.
	MaxChunkChars = 4000
)

// Embedder embeds the messages of a store that have no vector yet.
type Embedder struct {
	Store  loom.VectorStore
	Client *embedding.Client
	// Batch is how many chunks one request embeds (DefaultBatch).
	Batch int
	// OnStored is told of each batch of vectors once it is stored (a
	// Searcher's Add, to keep its index up to date).
	OnStored func(model string, vecs []loom.Vector)
	// Redact is the detector whose markers replace secrets in what is
	// sent to the embeddings endpoint, which may be another company's
	// service (nil: the built-in rules). Vectors are made from the
	// redacted text; a marker means as little to a model as the key did.
	Redact *secrets.Detector
}

// ErrBusy says another process is embedding the store.
var ErrBusy = errors.New("another loom process is embedding this store")

// Run embeds up to max chunks (all of them when max is 0) and returns
// how many it stored. Each batch's vectors are stored together with the
// store's high-water mark, so a Run that is killed goes on after the
// last stored batch and embeds nothing twice, except the one batch
// whose answer had come and was not yet stored. Only one process embeds
// a store at a time: Run returns ErrBusy when another does.
func (e *Embedder) Run(ctx context.Context, max int) (int, error) {
	model := e.Client.Model()
	if err := e.Store.UseVectorModel(ctx, model); err != nil {
		return 0, err
	}
	release, ok, err := e.Store.ClaimVectors(ctx)
	if err != nil {
		return 0, fmt.Errorf("vectors: %w", err)
	}
	if !ok {
		return 0, ErrBusy
	}
	defer release()
	batch := e.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	done := 0
	for max == 0 || done < max {
		n := batch
		if max > 0 {
			n = min(n, max-done)
		}
		chunks, upTo, err := e.Store.Unembedded(ctx, n, MaxChunkChars)
		if err != nil {
			return done, err
		}
		var vecs []loom.Vector
		if len(chunks) > 0 {
			d := e.Redact
			if d == nil {
				d = secrets.Default()
			}
			texts := make([]string, len(chunks))
			for i, c := range chunks {
				// The store cut the text at MaxChunkChars: read as cut.
				red, _ := d.RedactCut(c.Text, utf8.RuneCountInString(c.Text) >= MaxChunkChars)
				texts[i] = documentText(model, red)
			}
			fs, err := e.Client.Embed(ctx, texts)
			if err != nil {
				return done, err
			}
			vecs = make([]loom.Vector, len(chunks))
			for i, c := range chunks {
				vecs[i] = loom.Vector{ID: c.ID, Data: vecindex.Encode(fs[i])}
			}
		}
		if err := e.Store.PutVectors(ctx, model, upTo, vecs); err != nil {
			return done, err
		}
		done += len(vecs)
		if e.OnStored != nil && len(vecs) > 0 {
			e.OnStored(model, vecs)
		}
		if len(chunks) < n {
			return done, nil
		}
	}
	return done, nil
}

// Models of the nomic-embed-text family are trained with a prefix that
// says which side of a search a text is on.
func documentText(model, text string) string {
	if isNomic(model) {
		return "search_document: " + text
	}
	return text
}

func queryText(model, text string) string {
	if isNomic(model) {
		return "search_query: " + text
	}
	return text
}

func isNomic(model string) bool { return strings.HasPrefix(model, "nomic-embed-text") }

// Watch embeds what the store gains for as long as ctx lasts: a Run,
// then another every interval. An error is told to onErr (nil: ignored)
// and the next Run is tried an interval later; embedding never holds up
// anything else, it only lags.
func (e *Embedder) Watch(ctx context.Context, interval time.Duration, onErr func(error)) {
	for {
		if _, err := e.Run(ctx, 0); err != nil && ctx.Err() == nil && onErr != nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
