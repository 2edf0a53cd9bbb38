package main

// Embedders for the retrieval run's ranking by meaning (-embed): a
// server of the real embeddings API, or one of two stand-ins served here
// over the same API (POST /v1/embeddings), deterministic, with no
// model: "hash", a hashed bag of word stems (texts sharing words are
// near: a weak, lexical embedder), and "unrelated", a vector drawn at
// random from each text's hash (no text is nearer any other: an embedder
// that knows nothing). Both are what fusion must survive: no embedder
// may make ranking worse than keywords alone. "glove:PATH" is a real,
// trained embedder served the same way: the frequency-weighted mean of
// a text's GloVe word vectors (PATH in GloVe's text format, a word and
// its numbers a line, the most frequent words first).

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/embedding/embeddingtest"
)

// standInDims is the length of the stand-ins' vectors.
const standInDims = 256

// standIn starts a stand-in embedder named kind ("hash" or
// "unrelated") and returns its base URL (with /v1) and a function that
// stops it.
func standIn(kind string) (string, func(), error) {
	var embed func(string) []float32
	switch {
	case strings.HasPrefix(kind, "glove:"):
		g, err := loadGloVe(strings.TrimPrefix(kind, "glove:"))
		if err != nil {
			return "", nil, fmt.Errorf("-embed %s: %w", kind, err)
		}
		embed = g.vector
	case kind == "hash":
		embed = hashVector
	case kind == "unrelated":
		embed = unrelatedVector
	default:
		return "", nil, fmt.Errorf("-embed %q: want an http(s) URL of an embeddings API, hash, unrelated or glove:PATH", kind)
	}
	srv := embeddingtest.NewWith(embed)
	return srv.URL + "/v1", srv.Close, nil
}

// hashVector is a hashed bag of a text's word stems, stop words left
// out, each counted once per text and signed by its hash.
func hashVector(text string) []float32 {
	v := make([]float32, standInDims)
	seen := map[string]bool{}
	for _, w := range loom.Words(strings.ToLower(text)) {
		if english.IsStopWord(w) {
			continue
		}
		s := english.Stem(w, false)
		if seen[s] {
			continue
		}
		seen[s] = true
		h := fnv.New64a()
		h.Write([]byte(s))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%standInDims] += sign
	}
	return unit(v)
}

// unrelatedVector is a vector drawn at random, seeded by text's hash.
func unrelatedVector(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], h.Sum64())
	r := rand.New(rand.NewChaCha8(seed))
	v := make([]float32, standInDims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return unit(v)
}

// unit scales v to length 1; a zero vector gets one non-zero dimension.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}
