package fileedit

import (
	"hash/fnv"
	"strings"
	"unicode/utf8"
)

// Norm is a line as blame compares it: its runs of spaces and tabs one
// space, without leading or trailing ones, so that a line re-indented
// or realigned (gofmt, prettier) is still the same line. Spaces are
// those strings.Fields splits at; an ASCII line, most of them, is read
// in one pass, and given back as it is when it is already so.
func Norm(s string) string {
	normal := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return normSlow(s)
		case asciiSpace[c] == 0:
		case c != ' ' || i == 0 || i == len(s)-1 || s[i+1] == ' ':
			normal = false
		}
	}
	if normal {
		return s
	}
	b := make([]byte, 0, len(s))
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if asciiSpace[c] != 0 {
			space = len(b) > 0
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		b = append(b, c)
	}
	return string(b)
}

// asciiSpace marks the ASCII bytes unicode.IsSpace (and so
// strings.Fields) takes for spaces.
var asciiSpace = [256]uint8{'\t': 1, '\n': 1, '\v': 1, '\f': 1, '\r': 1, ' ': 1}

// normSlow is Norm of a line that is not all ASCII.
func normSlow(s string) string {
	var b strings.Builder
	space := false
	for _, f := range strings.Fields(s) {
		if space {
			b.WriteByte(' ')
		}
		b.WriteString(f)
		space = true
	}
	return b.String()
}

// Hash is the hash of a line the edit index keeps: 64 bits of FNV-1a of
// Norm(line), never 0 (the index's mark between runs of lines).
func Hash(line string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(Norm(line)))
	if v := h.Sum64(); v != 0 {
		return v
	}
	return 1
}

// Hashes are the hashes of runs of lines, with a 0 between two runs.
func Hashes(runs [][]string) []uint64 {
	var out []uint64
	for i, r := range runs {
		if i > 0 {
			out = append(out, 0)
		}
		for _, l := range r {
			out = append(out, Hash(l))
		}
	}
	return out
}

// Inserted are the runs of lines of b that a line diff from a to b
// inserts: the lines of b with no line of a matched to them, each run
// of neighbours together.
func Inserted(a, b []string) [][]string {
	m := Match(a, b)
	var out [][]string
	var run []string
	for j, i := range m {
		if i < 0 {
			run = append(run, b[j])
			continue
		}
		if len(run) > 0 {
			out = append(out, run)
			run = nil
		}
	}
	if len(run) > 0 {
		out = append(out, run)
	}
	return out
}

// Match aligns two versions of a text by their lines (as Norm makes
// them): for each line of b, the line of a it is the same line as, or
// -1 for a line b put in. It is a patience diff: common ends, then
// lines found once on each side as anchors, then a longest common
// subsequence between anchors where the gap is small enough to afford
// one (a gap too large for that matches nothing).
func Match(a, b []string) []int {
	na, nb := make([]string, len(a)), make([]string, len(b))
	for i, s := range a {
		na[i] = Norm(s)
	}
	for i, s := range b {
		nb[i] = Norm(s)
	}
	m := make([]int, len(b))
	for i := range m {
		m[i] = -1
	}
	match(na, nb, 0, len(na), 0, len(nb), m, 0)
	return m
}

// maxLCS bounds the cells of one longest-common-subsequence table.
const maxLCS = 4_000_000

func match(a, b []string, a0, a1, b0, b1 int, m []int, depth int) {
	for a0 < a1 && b0 < b1 && a[a0] == b[b0] {
		m[b0] = a0
		a0, b0 = a0+1, b0+1
	}
	for a0 < a1 && b0 < b1 && a[a1-1] == b[b1-1] {
		m[b1-1] = a1 - 1
		a1, b1 = a1-1, b1-1
	}
	if a0 == a1 || b0 == b1 {
		return
	}
	if anchors := unique(a, b, a0, a1, b0, b1); len(anchors) > 0 && depth < 64 {
		pa, pb := a0, b0
		for _, p := range anchors {
			match(a, b, pa, p[0], pb, p[1], m, depth+1)
			m[p[1]] = p[0]
			pa, pb = p[0]+1, p[1]+1
		}
		match(a, b, pa, a1, pb, b1, m, depth+1)
		return
	}
	if (a1-a0)*(b1-b0) <= maxLCS {
		lcs(a, b, a0, a1, b0, b1, m)
	}
}

// unique are the pairs (i, j) of lines found once in a[a0:a1] and once
// in b[b0:b1], the same line, kept in a longest run increasing on both
// sides.
func unique(a, b []string, a0, a1, b0, b1 int) [][2]int {
	type seen struct{ na, nb, ia, ib int }
	count := map[string]*seen{}
	for i := a0; i < a1; i++ {
		s := count[a[i]]
		if s == nil {
			s = &seen{}
			count[a[i]] = s
		}
		s.na++
		s.ia = i
	}
	for j := b0; j < b1; j++ {
		if s := count[b[j]]; s != nil {
			s.nb++
			s.ib = j
		}
	}
	var pairs [][2]int
	for j := b0; j < b1; j++ {
		if s := count[b[j]]; s != nil && s.na == 1 && s.nb == 1 {
			pairs = append(pairs, [2]int{s.ia, j})
		}
	}
	return longestIncreasing(pairs)
}

// longestIncreasing keeps the longest run of pairs (ordered by their
// second) whose firsts increase too.
func longestIncreasing(p [][2]int) [][2]int {
	if len(p) == 0 {
		return nil
	}
	tails := []int{} // index in p of the smallest tail of each length
	prev := make([]int, len(p))
	for i := range p {
		lo, hi := 0, len(tails)
		for lo < hi {
			mid := (lo + hi) / 2
			if p[tails[mid]][0] < p[i][0] {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo > 0 {
			prev[i] = tails[lo-1]
		} else {
			prev[i] = -1
		}
		if lo == len(tails) {
			tails = append(tails, i)
		} else {
			tails[lo] = i
		}
	}
	out := make([][2]int, len(tails))
	for k, i := len(tails)-1, tails[len(tails)-1]; k >= 0; k, i = k-1, prev[i] {
		out[k] = p[i]
	}
	return out
}

// lcs matches a[a0:a1] and b[b0:b1] by a longest common subsequence.
func lcs(a, b []string, a0, a1, b0, b1 int, m []int) {
	n, k := a1-a0, b1-b0
	t := make([]int32, (n+1)*(k+1))
	at := func(i, j int) *int32 { return &t[i*(k+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := k - 1; j >= 0; j-- {
			if a[a0+i] == b[b0+j] {
				*at(i, j) = *at(i+1, j+1) + 1
			} else {
				*at(i, j) = max(*at(i+1, j), *at(i, j+1))
			}
		}
	}
	for i, j := 0, 0; i < n && j < k; {
		switch {
		case a[a0+i] == b[b0+j]:
			m[b0+j] = a0 + i
			i, j = i+1, j+1
		case *at(i+1, j) >= *at(i, j+1):
			i++
		default:
			j++
		}
	}
}
