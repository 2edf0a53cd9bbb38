// Package vecindex finds the stored vectors nearest to a query's, in
// memory and in pure Go, fast enough for a million vectors of 768
// dimensions (docs/search.md, "Ranking by meaning").
//
// Vectors are of length 1, so that the dot product is the cosine
// similarity, and kept as one signed byte per dimension (Encode): a
// quarter of the memory of float32, and exact enough to rank. A search
// of a large index runs in two steps. First each vector's signs, one bit
// per dimension, are compared with the query's (a Hamming distance, a
// dozen machine words for 768 dimensions): this finds, across all
// cores, the Candidates vectors whose signs agree most with the query's.
// Then those candidates alone are scored by their dot product with the
// query and the best returned. An index of at most ExactBelow vectors
// skips the first step and scores every vector.
package vecindex

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// ExactBelow is the size under which every vector is scored.
const ExactBelow = 50_000

// Index holds vectors of one length by id. Add and Search may not run
// at the same time; Search may run from several goroutines at once.
type Index struct {
	dims  int
	words int // uint64 words of one sign signature
	ids   []int64
	q     []int8   // the vectors, dims bytes each
	signs []uint64 // the sign signatures, words each
	// Candidates is how many vectors the first step of a search keeps
	// for every one asked for (at least MinCandidates in all).
	Candidates    int
	MinCandidates int
}

// New returns an empty index of vectors of dims dimensions.
func New(dims int) *Index {
	return &Index{dims: dims, words: (dims + 63) / 64, Candidates: 100, MinCandidates: 5000}
}

// Dims is the length of the index's vectors.
func (x *Index) Dims() int { return x.dims }

// Len is how many vectors the index holds.
func (x *Index) Len() int { return len(x.ids) }

// Encode turns a vector of length 1 into the bytes an index (and a
// store) keeps: each dimension times 127, rounded, as a signed byte.
func Encode(v []float32) []byte {
	out := make([]byte, len(v))
	for i, f := range v {
		out[i] = byte(quantize(f))
	}
	return out
}

func quantize(f float32) int8 {
	r := math.Round(float64(f) * 127)
	if math.IsNaN(r) {
		return 0
	}
	return int8(max(-127, min(127, r)))
}

// Add puts the vector data (as Encode makes it) under id.
func (x *Index) Add(id int64, data []byte) error {
	if len(data) != x.dims {
		return fmt.Errorf("vector %d has %d dimensions, the index %d", id, len(data), x.dims)
	}
	x.ids = append(x.ids, id)
	sig := make([]uint64, x.words)
	for i, b := range data {
		x.q = append(x.q, int8(b))
		if int8(b) > 0 {
			sig[i/64] |= 1 << (i % 64)
		}
	}
	x.signs = append(x.signs, sig...)
	return nil
}

// Search returns the ids of the k vectors nearest to query (of length 1)
// best first, with their cosine similarities.
func (x *Index) Search(query []float32, k int) ([]int64, []float64, error) {
	if len(query) != x.dims {
		return nil, nil, fmt.Errorf("the query's vector has %d dimensions, the index %d", len(query), x.dims)
	}
	n := len(x.ids)
	if k <= 0 || n == 0 {
		return nil, nil, nil
	}
	qq := make([]int8, x.dims)
	qsig := make([]uint64, x.words)
	for i, f := range query {
		qq[i] = quantize(f)
		if qq[i] > 0 {
			qsig[i/64] |= 1 << (i % 64)
		}
	}
	var cands []int32
	if want := max(k*x.Candidates, x.MinCandidates); n < ExactBelow || want >= n {
		cands = make([]int32, n)
		for i := range cands {
			cands[i] = int32(i)
		}
	} else {
		cands = x.nearestSigns(qsig, want)
	}
	type scored struct {
		i     int32
		score int32
	}
	out := make([]scored, len(cands))
	parallel(len(cands), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			i := int(cands[j])
			out[j] = scored{cands[j], dot(qq, x.q[i*x.dims:(i+1)*x.dims])}
		}
	})
	slices.SortFunc(out, func(a, b scored) int {
		if a.score != b.score {
			return int(b.score - a.score)
		}
		return int(a.i - b.i)
	})
	out = out[:min(k, len(out))]
	ids := make([]int64, len(out))
	scores := make([]float64, len(out))
	for j, s := range out {
		ids[j] = x.ids[s.i]
		scores[j] = float64(s.score) / (127 * 127)
	}
	return ids, scores, nil
}

// nearestSigns returns the positions of about want vectors whose sign
// signatures are nearest qsig: all those nearer than a threshold
// distance, and as many at that distance as fill want.
func (x *Index) nearestSigns(qsig []uint64, want int) []int32 {
	n := len(x.ids)
	dist := make([]uint16, n)
	w := x.words
	parallel(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sig := x.signs[i*w : (i+1)*w]
			d := 0
			for j, s := range sig {
				d += bits.OnesCount64(s ^ qsig[j])
			}
			dist[i] = uint16(d)
		}
	})
	hist := make([]int, x.dims+2)
	for _, d := range dist {
		hist[d]++
	}
	limit, total := 0, 0
	for limit = range hist {
		if total+hist[limit] >= want {
			break
		}
		total += hist[limit]
	}
	// Every vector nearer than limit, and want-total at limit.
	atLimit := want - total
	cands := make([]int32, 0, want)
	for i, d := range dist {
		switch {
		case int(d) < limit:
			cands = append(cands, int32(i))
		case int(d) == limit && atLimit > 0:
			cands = append(cands, int32(i))
			atLimit--
		}
	}
	return cands
}

// dot is the dot product of two vectors of signed bytes, four at a time.
func dot(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// parallel runs fn over [0, n) split across the machine's cores.
func parallel(n int, fn func(lo, hi int)) {
	parts := runtime.GOMAXPROCS(0)
	if n < 4096 || parts == 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + parts - 1) / parts
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
