package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

type result struct {
	op, budget      string
	limit, limitP99 float64 // ms
	loom, base      []time.Duration
	// min holds the minimal store's times, when it was measured.
	min            []time.Duration
	note           string
	rate, baseRate float64
	minRate        float64
	isRate         bool
	// hostile marks a search measured without a baseline: its slowest
	// run, what it gave, and the growth of resident memory.
	hostile bool
	outcome string
	peakKB  uint64
	// isSize marks the size on disk of loom's store and of the minimal
	// store, in bytes; limit is then the greatest ratio allowed.
	isSize        bool
	size, minSize int64
}

// contender is one of the functions a row compares, with where its times
// go and how its errors are named.
type contender struct {
	name  string
	times *[]time.Duration
}

func contenders(r *result, n int) []contender {
	c := []contender{{"", &r.loom}, {"baseline ", &r.base}, {"minimal store ", &r.min}}
	return c[:n]
}

// measure times loomFn, baseFn and, when given, the minimal store's
// function runs times each (see measureEach, with nothing to make
// first).
func measure(op, budget string, limitMS float64, runs int, loomFn, baseFn func() error, minFn ...func() error) result {
	ready := func(fn func() error) func() (func() error, error) {
		return func() (func() error, error) { return fn, nil }
	}
	var mins []func() (func() error, error)
	for _, fn := range minFn {
		mins = append(mins, ready(fn))
	}
	return measureEach(op, budget, limitMS, runs, ready(loomFn), ready(baseFn), mins...)
}

// measureEach is measure for operations that need something made first,
// untimed: loomFn, baseFn and minFn make it and return the step to time.
func measureEach(op, budget string, limitMS float64, runs int, loomFn, baseFn func() (func() error, error), minFn ...func() (func() error, error)) result {
	fns := append([]func() (func() error, error){loomFn, baseFn}, minFn...)
	r := result{op: op, budget: budget, limit: limitMS}
	cs := contenders(&r, len(fns))
	// The first run of each warms up.
	for run := -1; run < runs; run++ {
		for k := range fns {
			i := (run + 1 + k) % len(fns)
			step, err := fns[i]()
			if err == nil {
				t0 := time.Now()
				err = step()
				if run >= 0 {
					*cs[i].times = append(*cs[i].times, time.Since(t0))
				}
			}
			if err != nil {
				r.note = cs[i].name + "error: " + err.Error()
				return r
			}
		}
	}
	fmt.Fprintf(os.Stderr, "measured %s\n", op)
	return r
}

func measureP99(op, budget string, medianMS, p99MS float64, runs int, loomFn, baseFn func() error, minFn ...func() error) result {
	r := measure(op, budget, medianMS, runs, loomFn, baseFn, minFn...)
	r.limitP99 = p99MS
	return r
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

// ratioText writes a ratio to two decimals, or to two significant digits
// when it is below 0.1, so that a small one does not read as zero.
func ratioText(r float64) string {
	if r > 0 && r < 0.1 {
		return strconv.FormatFloat(r, 'g', 2, 64) + "×"
	}
	return fmt.Sprintf("%.2f×", r)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type report struct {
	scale      string
	rows       []result
	notes      []string
	importNote string
}

func (r *report) add(x result)     { r.rows = append(r.rows, x) }
func (r *report) addNote(n string) { r.notes = append(r.notes, n) }

// addRate adds a rate row; minRate, when given, is the minimal store's.
func (r *report) addRate(op, budget string, limit, rate, baseRate float64, minRate ...float64) {
	x := result{op: op, budget: budget, limit: limit, rate: rate, baseRate: baseRate, isRate: true}
	if len(minRate) > 0 {
		x.minRate = minRate[0]
	}
	r.rows = append(r.rows, x)
}

// addSize adds the size on disk of loom's store and of the minimal
// store, bytes each, against the greatest ratio allowed.
func (r *report) addSize(op, budget string, limit float64, size, minSize int64) {
	r.rows = append(r.rows, result{op: op, budget: budget, limit: limit, size: size, minSize: minSize, isSize: true})
}

func (r *report) print(file string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Scale: %s.\n\n", r.scale)
	fmt.Fprintln(&b, "| operation | budget | loom | baseline | ratio | minimal store | ratio to minimal | |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|")
	for _, x := range r.rows {
		switch {
		case x.note != "" && len(x.loom) == 0:
			fmt.Fprintf(&b, "| %s | %s | %s | | | | | |\n", x.op, x.budget, x.note)
		case x.hostile:
			slowest := slices.Max(x.loom)
			verdict := "met"
			if ms(slowest) > x.limit {
				verdict = "**missed**"
			}
			fmt.Fprintf(&b, "| %s | %s | slowest %.1f ms, resident memory +%.1f MB; %s | — | | | | %s |\n",
				x.op, x.budget, ms(slowest), float64(x.peakKB)/1024, x.outcome, verdict)
		case x.isSize:
			mb := func(n int64) float64 { return float64(n) / (1 << 20) }
			ratio := float64(x.size) / float64(max(x.minSize, 1))
			verdict := "met"
			if ratio > x.limit {
				verdict = "**missed**"
			}
			fmt.Fprintf(&b, "| %s | %s | %.1f MB | — | | %.1f MB | %.2f× | %s |\n", x.op, x.budget, mb(x.size), mb(x.minSize), ratio, verdict)
		case x.isRate:
			verdict := "met"
			if x.rate == 0 {
				verdict = "not measured"
			} else if x.rate < x.limit {
				verdict = "**missed**"
			}
			ratio, mfig, mratio := "", "", ""
			if x.rate > 0 {
				ratio = fmt.Sprintf("%.2f× (higher is better)", x.rate/x.baseRate)
			}
			if x.minRate > 0 {
				mfig = fmt.Sprintf("%.0f msg/s", x.minRate)
				if x.rate > 0 {
					mratio = fmt.Sprintf("%.2f× (higher is better)", x.rate/x.minRate)
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %.0f msg/s | %.0f msg/s | %s | %s | %s | %s |\n", x.op, x.budget, x.rate, x.baseRate, ratio, mfig, mratio, verdict)
		default:
			med, bmed, mmed := pct(x.loom, 0.5), pct(x.base, 0.5), pct(x.min, 0.5)
			fig := fmt.Sprintf("median %.3f ms", ms(med))
			bfig := fmt.Sprintf("median %.3f ms", ms(bmed))
			mfig := fmt.Sprintf("median %.3f ms", ms(mmed))
			ok := ms(med) <= x.limit
			if x.limitP99 > 0 {
				p99, bp99, mp99 := pct(x.loom, 0.99), pct(x.base, 0.99), pct(x.min, 0.99)
				fig += fmt.Sprintf(", p99 %.3f ms", ms(p99))
				bfig += fmt.Sprintf(", p99 %.3f ms", ms(bp99))
				mfig += fmt.Sprintf(", p99 %.3f ms", ms(mp99))
				ok = ok && ms(p99) <= x.limitP99
			}
			mratio := ratioText(float64(med) / float64(max(mmed, 1)))
			if len(x.min) == 0 {
				mfig, mratio = "", ""
			}
			verdict := "met"
			switch {
			case x.budget == "":
				verdict = "no budget"
			case !ok:
				verdict = "**missed**"
			}
			if x.note != "" {
				verdict += " (" + x.note + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f× | %s | %s | %s |\n", x.op, x.budget, fig, bfig, float64(med)/float64(max(bmed, 1)), mfig, mratio, verdict)
		}
	}
	fmt.Fprintln(&b)
	for _, n := range append(r.notes, r.importNote) {
		fmt.Fprintln(&b, n)
	}
	fmt.Print(b.String())
	if file != "" {
		return os.WriteFile(file, []byte(b.String()), 0o644)
	}
	return nil
}
