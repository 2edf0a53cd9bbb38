package holdout_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

type tcase struct {
	n       int
	kind    string // generator
	carrier string
	style   string
	msg     *loom.Message
	secs    []sec
}

func buildCases() []tcase {
	r := newRng(20250601)
	kp := newKeyPool()
	var cs []tcase
	ci := 0
	// token kinds: 5 each, carriers round-robin over both sets
	all := append(append([]string{}, docCarriers...), tokCarriers...)
	for _, k := range tokKinds {
		for i := 0; i < 7; i++ {
			name := k.names[r.IntN(len(k.names))]
			v := k.gen(r)
			c := all[ci%len(all)]
			ci++
			tc := tcase{n: len(cs), kind: k.id, carrier: c}
			s := sec{kind: k.id, value: v}
			if strings.HasPrefix(c, "env-") || slicesContains(tokCarriers, c) {
				tc.msg, s.forms = tokCarrier(r, c, name, v, kp)
				tc.style = c
			} else {
				doc, path, style := embed(r, name, v)
				tc.style = style
				if c == "grep-output" { // grep shows the matching line
					for _, l := range strings.Split(doc, "\n") {
						if strings.Contains(l, v) {
							doc = l + "\n"
						}
					}
				}
				tc.msg = docCarrier(r, c, doc, path)
			}
			tc.secs = []sec{s}
			cs = append(cs, tc)
		}
	}
	di := 0
	for _, k := range docKinds {
		n := len(docCarriers)
		if k.id == "private-key" || k.id == "multi-env" {
			n = 3 * len(docCarriers)
		}
		for i := 0; i < n; i++ {
			doc, path, secs := k.gen(r, kp)
			c := docCarriers[di%len(docCarriers)]
			di++
			if c == "grep-output" && strings.Count(doc, "\n") > 12 {
				c = "cat-output"
			}
			cs = append(cs, tcase{n: len(cs), kind: k.id, carrier: c, style: "doc", msg: docCarrier(r, c, doc, path), secs: secs})
		}
	}
	return cs
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

type tally struct{ caught, total int }

func (t tally) String() string {
	return fmt.Sprintf("%3d/%-3d %5.1f%%", t.caught, t.total, 100*float64(t.caught)/float64(max(1, t.total)))
}

func TestHoldoutRecall(t *testing.T) {
	d := secrets.Default()
	cs := buildCases()
	var all tally
	byKind, byCarrier, byStyle, byGen := map[string]*tally{}, map[string]*tally{}, map[string]*tally{}, map[string]*tally{}
	add := func(m map[string]*tally, k string, ok bool) {
		if m[k] == nil {
			m[k] = &tally{}
		}
		m[k].total++
		if ok {
			m[k].caught++
		}
	}
	var misses []string
	dumpCase := map[string]bool{}
	for _, x := range strings.Split(os.Getenv("HOLDOUT_DUMP"), ",") {
		dumpCase[x] = true
	}
	for _, c := range cs {
		if dumpCase[fmt.Sprint(c.n)] {
			b, _ := json.MarshalIndent(c.msg.Parts, "", " ")
			fmt.Printf("CASE %d %s %s\n%s\n", c.n, c.kind, c.carrier, b)
		}
		red, _ := d.RedactMessage(c.msg)
		text := readable(red)
		orig := readable(c.msg)
		for _, s := range c.secs {
			how := leak(text, s)
			ok := how == ""
			all.total++
			if ok {
				all.caught++
			}
			add(byKind, s.kind, ok)
			add(byCarrier, c.carrier, ok)
			add(byStyle, c.style, ok)
			if c.kind == "multi-env" {
				add(byGen, "multi-env", ok)
			} else {
				add(byGen, "single", ok)
			}
			if !ok {
				v := s.value
				if s.lines {
					v = strings.Split(s.value, "\n")[0]
				}
				ex := excerpt(text, v, 70)
				if ex == "" {
					ex = excerpt(orig, v, 70)
				}
				places := d.ScanMessage(c.msg)
				var rules []string
				for _, p := range places {
					rules = append(rules, p.RuleID)
				}
				misses = append(misses, fmt.Sprintf("MISS #%d kind=%s carrier=%s style=%s leak=%s rules=%v\n    %s", c.n, s.kind, c.carrier, c.style, how, rules, maskAll(ex, c.secs)))
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "RECALL overall %s (%d cases)\n\nper kind:\n", all, len(cs))
	dump := func(m map[string]*tally) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := m[keys[i]], m[keys[j]]
			ra, rb := float64(a.caught)/float64(a.total), float64(b.caught)/float64(b.total)
			if ra != rb {
				return ra < rb
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-34s %s\n", k, m[k])
		}
	}
	dump(byKind)
	b.WriteString("\nper carrier:\n")
	dump(byCarrier)
	macro, nk := 0.0, 0
	for _, v := range byKind {
		macro += float64(v.caught) / float64(v.total)
		nk++
	}
	fmt.Fprintf(&b, "\nkinds: %d, macro-average recall %.1f%%\n", nk, 100*macro/float64(nk))
	b.WriteString("\nsingle-secret cases vs multi-secret .env:\n")
	dump(byGen)
	b.WriteString("\nper style:\n")
	dump(byStyle)
	b.WriteString("\nmisses:\n" + strings.Join(misses, "\n") + "\n")
	out := os.Getenv("HOLDOUT_OUT")
	if out == "" {
		out = filepath.Join(os.TempDir(), "holdout-recall.txt")
	}
	os.WriteFile(out, []byte(b.String()), 0o644)
	t.Logf("recall %s; report in %s", all, out)
	if all.total < 1000 || float64(all.caught) < 0.97*float64(all.total) {
		t.Errorf("held-out recall %s: want 97%% of at least 1,000 secrets", all)
	}
}
