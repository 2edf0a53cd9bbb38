package vecindex

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/cputime"
)

// The benchmarks search a million vectors of 768 dimensions (an index
// of about 870 MB), made once per run.
const (
	benchN    = 1_000_000
	benchDims = 768
)

var bench = sync.OnceValue(func() *Index {
	r := rand.New(rand.NewPCG(3, 3))
	cs := make([][]float32, 2000)
	for i := range cs {
		cs[i] = unit(r, benchDims, nil, 0)
	}
	x := New(benchDims)
	x.ids = make([]int64, 0, benchN)
	x.q = make([]int8, 0, benchN*benchDims)
	x.signs = make([]uint64, 0, benchN*x.words)
	for i := range benchN {
		x.Add(int64(i), Encode(unit(r, benchDims, cs[r.IntN(len(cs))], 0.6)))
	}
	return x
})

func benchQueries() [][]float32 {
	r := rand.New(rand.NewPCG(4, 4))
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = unit(r, benchDims, nil, 0)
	}
	return qs
}

// BenchmarkSearch1M is one search for the 20 nearest of a million
// vectors of 768 dimensions.
func BenchmarkSearch1M(b *testing.B) {
	x, qs := bench(), benchQueries()
	var took []time.Duration
	cpu0 := cputime.Used()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, _, err := x.Search(qs[i%len(qs)], 20); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
	// The CPU time a search takes, all cores together: on a machine
	// whose cores are busy with other work, wall time says more about
	// the other work than about the search.
	b.ReportMetric(float64(cputime.Used()-cpu0)/1e6/float64(len(took)), "cpu-ms/op")
}

// BenchmarkBaseline1M is the minimal way to the same answer: every
// vector scored by its dot product with the query on one core, the best
// 20 kept; BenchmarkSearch1M is measured against it.
func BenchmarkBaseline1M(b *testing.B) {
	x, qs := bench(), benchQueries()
	cpu0, n := cputime.Used(), 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		n++
		q := qs[i%len(qs)]
		qq := make([]int8, benchDims)
		for j, f := range q {
			qq[j] = quantize(f)
		}
		var best [20]int32
		var bestAt [20]int
		for j := range x.ids {
			s := dot(qq, x.q[j*benchDims:(j+1)*benchDims])
			if s > best[19] {
				k := 19
				for k > 0 && best[k-1] < s {
					best[k], bestAt[k] = best[k-1], bestAt[k-1]
					k--
				}
				best[k], bestAt[k] = s, j
			}
		}
	}
	b.ReportMetric(float64(cputime.Used()-cpu0)/1e6/float64(n), "cpu-ms/op")
}
