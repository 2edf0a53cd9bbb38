package vecindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// clustered makes n vectors of length 1 around centers cluster centres,
// as embeddings of texts on a limited number of topics lie, and returns
// them with the index holding them.
func clustered(t testing.TB, n, dims, centers int, seed uint64) ([][]float32, *Index) {
	r := rand.New(rand.NewPCG(seed, 1))
	cs := make([][]float32, centers)
	for i := range cs {
		cs[i] = unit(r, dims, nil, 0)
	}
	x := New(dims)
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = unit(r, dims, cs[r.IntN(centers)], 0.6)
		if err := x.Add(int64(i), Encode(vecs[i])); err != nil {
			t.Fatal(err)
		}
	}
	return vecs, x
}

// unit is a random vector of length 1: around c (noise times a random
// one added to it) when c is given.
func unit(r *rand.Rand, dims int, c []float32, noise float64) []float32 {
	v := make([]float32, dims)
	var sum float64
	for i := range v {
		f := r.NormFloat64()
		if c != nil {
			f = float64(c[i]) + noise*f/math.Sqrt(float64(dims))
		}
		v[i] = float32(f)
		sum += f * f
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(sum))
	}
	return v
}

// exact is the k nearest of vecs to q by their float dot product.
func exact(vecs [][]float32, q []float32, k int) []int64 {
	type s struct {
		i int64
		d float64
	}
	all := make([]s, len(vecs))
	for i, v := range vecs {
		var d float64
		for j := range v {
			d += float64(v[j]) * float64(q[j])
		}
		all[i] = s{int64(i), d}
	}
	slices.SortFunc(all, func(a, b s) int {
		if a.d > b.d {
			return -1
		}
		if a.d < b.d {
			return 1
		}
		return 0
	})
	out := make([]int64, k)
	for i := range out {
		out[i] = all[i].i
	}
	return out
}

func TestSearchFindsTheNearestBestFirst(t *testing.T) {
	vecs, x := clustered(t, 2000, 64, 20, 1)
	for qi := range 20 {
		q := vecs[qi*7]
		ids, scores, err := x.Search(q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if ids[0] != int64(qi*7) || scores[0] < 0.98 {
			t.Errorf("query %d: best %d (%.3f), want itself", qi*7, ids[0], scores[0])
		}
		if !sortedDesc(scores) {
			t.Errorf("scores not best first: %v", scores)
		}
	}
}

func sortedDesc(s []float64) bool {
	for i := 1; i < len(s); i++ {
		if s[i] > s[i-1] {
			return false
		}
	}
	return true
}

// TestTwoStepRecall checks the two-step search of a large index against
// the exact float ranking: of the 10 nearest, at least 9 on average are
// found.
func TestTwoStepRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 120,000 vectors")
	}
	r := rand.New(rand.NewPCG(7, 7))
	vecs, x := clustered(t, ExactBelow+70_000, 256, 500, 2)
	found, total := 0, 0
	for range 30 {
		q := unit(r, 256, vecs[r.IntN(len(vecs))], 0.8)
		want := exact(vecs, q, 10)
		got, _, err := x.Search(q, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range want {
			if slices.Contains(got, id) {
				found++
			}
		}
		total += len(want)
	}
	if recall := float64(found) / float64(total); recall < 0.9 {
		t.Errorf("recall@10 = %.2f, want ≥ 0.9", recall)
	} else {
		t.Logf("recall@10 = %.3f", recall)
	}
}

func TestSearchRefusesAnotherLength(t *testing.T) {
	x := New(8)
	if err := x.Add(1, make([]byte, 7)); err == nil {
		t.Error("a vector of 7 dimensions went into an index of 8")
	}
	if _, _, err := x.Search(make([]float32, 9), 5); err == nil {
		t.Error("a query of 9 dimensions searched an index of 8")
	}
	if ids, _, err := x.Search(make([]float32, 8), 5); err != nil || ids != nil {
		t.Errorf("an empty index: %v, %v", ids, err)
	}
}

func TestEncodeClamps(t *testing.T) {
	got := Encode([]float32{1, -1, 2, float32(math.NaN()), 0.5})
	want := []int8{127, -127, 127, 0, 64}
	for i := range want {
		if int8(got[i]) != want[i] {
			t.Errorf("Encode[%d] = %d, want %d", i, int8(got[i]), want[i])
		}
	}
}
