package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

type result struct {
	op, budget      string
	limit, limitP99 float64 // ms
	loom, base      []time.Duration
	note            string
	rate, baseRate  float64
	isRate          bool
	// hostile marks a search measured without a baseline: its slowest
	// run, what it gave, and the growth of resident memory.
	hostile bool
	outcome string
	peakKB  uint64
}

func measure(op, budget string, limitMS float64, runs int, loomFn, baseFn func() error) result {
	r := result{op: op, budget: budget, limit: limitMS}
	// Warm up both once, then alternate so that neither gets a warmer
	// cache than the other.
	if err := loomFn(); err != nil {
		r.note = "error: " + err.Error()
		return r
	}
	if err := baseFn(); err != nil {
		r.note = "baseline error: " + err.Error()
		return r
	}
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		if err := loomFn(); err != nil {
			r.note = "error: " + err.Error()
			return r
		}
		r.loom = append(r.loom, time.Since(t0))
		t0 = time.Now()
		if err := baseFn(); err != nil {
			r.note = "baseline error: " + err.Error()
			return r
		}
		r.base = append(r.base, time.Since(t0))
	}
	fmt.Fprintf(os.Stderr, "measured %s\n", op)
	return r
}

// measureEach is measure for operations that need something made first,
// untimed: loomFn and baseFn make it and return the step to time.
func measureEach(op, budget string, limitMS float64, runs int, loomFn, baseFn func() (func() error, error)) result {
	timed := func(prepare func() (func() error, error)) func() (time.Duration, error) {
		return func() (time.Duration, error) {
			step, err := prepare()
			if err != nil {
				return 0, err
			}
			t0 := time.Now()
			err = step()
			return time.Since(t0), err
		}
	}
	l, b := timed(loomFn), timed(baseFn)
	r := result{op: op, budget: budget, limit: limitMS}
	for i := -1; i < runs; i++ {
		dl, err := l()
		if err != nil {
			r.note = "error: " + err.Error()
			return r
		}
		db, err := b()
		if err != nil {
			r.note = "baseline error: " + err.Error()
			return r
		}
		// The first of each warms up.
		if i >= 0 {
			r.loom, r.base = append(r.loom, dl), append(r.base, db)
		}
	}
	fmt.Fprintf(os.Stderr, "measured %s\n", op)
	return r
}

func measureP99(op, budget string, medianMS, p99MS float64, runs int, loomFn, baseFn func() error) result {
	r := measure(op, budget, medianMS, runs, loomFn, baseFn)
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

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type report struct {
	scale      string
	rows       []result
	notes      []string
	importNote string
}

func (r *report) add(x result)     { r.rows = append(r.rows, x) }
func (r *report) addNote(n string) { r.notes = append(r.notes, n) }
func (r *report) addRate(op, budget string, limit, rate, baseRate float64) {
	r.rows = append(r.rows, result{op: op, budget: budget, limit: limit, rate: rate, baseRate: baseRate, isRate: true})
}

func (r *report) print(file string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Scale: %s.\n\n", r.scale)
	fmt.Fprintln(&b, "| operation | budget | loom | baseline | ratio | |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|")
	for _, x := range r.rows {
		switch {
		case x.note != "" && len(x.loom) == 0:
			fmt.Fprintf(&b, "| %s | %s | %s | | | |\n", x.op, x.budget, x.note)
		case x.hostile:
			slowest := slices.Max(x.loom)
			verdict := "met"
			if ms(slowest) > x.limit {
				verdict = "**missed**"
			}
			fmt.Fprintf(&b, "| %s | %s | slowest %.1f ms, resident memory +%.1f MB; %s | — | | %s |\n",
				x.op, x.budget, ms(slowest), float64(x.peakKB)/1024, x.outcome, verdict)
		case x.isRate:
			verdict := "met"
			if x.rate == 0 {
				verdict = "not measured"
			} else if x.rate < x.limit {
				verdict = "**missed**"
			}
			ratio := ""
			if x.rate > 0 {
				ratio = fmt.Sprintf("%.2f× (higher is better)", x.rate/x.baseRate)
			}
			fmt.Fprintf(&b, "| %s | %s | %.0f msg/s | %.0f msg/s | %s | %s |\n", x.op, x.budget, x.rate, x.baseRate, ratio, verdict)
		default:
			med, bmed := pct(x.loom, 0.5), pct(x.base, 0.5)
			fig := fmt.Sprintf("median %.3f ms", ms(med))
			bfig := fmt.Sprintf("median %.3f ms", ms(bmed))
			ok := ms(med) <= x.limit
			if x.limitP99 > 0 {
				p99, bp99 := pct(x.loom, 0.99), pct(x.base, 0.99)
				fig += fmt.Sprintf(", p99 %.3f ms", ms(p99))
				bfig += fmt.Sprintf(", p99 %.3f ms", ms(bp99))
				ok = ok && ms(p99) <= x.limitP99
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
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f× | %s |\n", x.op, x.budget, fig, bfig, float64(med)/float64(max(bmed, 1)), verdict)
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
