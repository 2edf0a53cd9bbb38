package secrets

import (
	"crypto/sha256"
	"slices"
	"strings"
	"sync"
)

// MaxText bounds the text Find reads: past it, the rest of a text is
// searched in windows of this size (with overlap), so that a huge tool
// output costs time in proportion to its size and no more memory.
const MaxText = 1 << 20

// Cut is the mark that ends a text cut short (loom.Truncate's).
const Cut = "…"

// Find returns the secrets in text, in order, none overlapping another.
// Text is read as a person reads it: JSON escapes decoded (a tool's
// output as stored), and a text that ends in "…" (a title or a last
// prompt cut short) read as cut, so that a key of which only the start
// is left is found too.
func (d *Detector) Find(text string) []Finding {
	if len(text) < 8 {
		return nil
	}
	if d.memo == nil {
		return d.find0(text)
	}
	k := sha256.Sum256([]byte(text))
	if f, ok := d.memo.get(k); ok {
		return f
	}
	f := d.find0(text)
	d.memo.put(k, f)
	return f
}

// find0 is Find, read afresh.
func (d *Detector) find0(text string) []Finding {
	var out []Finding
	if len(text) <= MaxText {
		out = d.findText(text, 0)
	} else {
		const overlap = 16 << 10
		for off := 0; off < len(text); off += MaxText - overlap {
			end := min(off+MaxText, len(text))
			out = append(out, d.findText(text[off:end], off)...)
			if end == len(text) {
				break
			}
		}
	}
	return settle(out)
}

// findText finds in text, whose offsets are moved by off, through its
// view when it holds escapes.
func (d *Detector) findText(text string, off int) []Finding {
	v := newView(text)
	src := text
	if v != nil {
		src = v.text
	}
	// A JSON string (a tool's output as stored) is read without its
	// quotes, so that its first line starts a line; a text that only
	// starts and ends with a quote ("client_secret": "…") is not one.
	in := 0
	if len(text) >= 2 && text[0] == '"' && jsonStringEnd(text, 0) == len(text)-1 && len(src) >= 2 {
		in = 1
	}
	out := d.find(src[in:len(src)-in], 0)
	for i := range out {
		out[i].Start += in
		out[i].End += in
	}
	if strings.HasSuffix(src, Cut) {
		out = append(out, d.findCut(src[:len(src)-len(Cut)])...)
	}
	out = d.allowed(src, out)
	for i := range out {
		out[i].ID = ValueID(src[out[i].Start:out[i].End])
		if !out[i].cut {
			out[i].value = src[out[i].Start:out[i].End]
		}
		if v != nil {
			out[i].Start, out[i].End = v.span(out[i].Start, out[i].End)
		}
		out[i].Start += off
		out[i].End += off
	}
	return out
}

// cutPad stands for what followed a text cut short: key characters of
// every class, so that a rule whose token was cut finds it again.
const cutPad = "Q7mZ4pX9kR2vT8wN5bJ3hL6yC1dF0gS"

// findCut returns the secrets that run into the end of text, which was
// cut there: the rules run on its last lines with cutPad after them,
// and what they find from before the cut to after it is a secret cut
// short.
func (d *Detector) findCut(text string) []Finding {
	if text == "" || text[len(text)-1] == ' ' || text[len(text)-1] == '\n' {
		return nil
	}
	from := max(0, len(text)-2048)
	if i := strings.IndexByte(text[from:], '\n'); from > 0 && i >= 0 {
		from += i + 1
	}
	tail := text[from:]
	var out []Finding
	for _, x := range d.find(tail+cutPad+cutPad, 1) {
		if x.Start < len(tail) && x.End > len(tail) {
			out = append(out, Finding{RuleID: x.RuleID, Start: from + x.Start, End: from + len(tail), cut: true})
		}
	}
	return out
}

// find returns the findings of every rule in text; depth counts
// base64 decoding (one level only).
func (d *Detector) find(text string, depth int) []Finding {
	// Where each rule's keywords are, from one pass over the text in
	// lower case (ASCII only, so that offsets stay those of text).
	buf := lowerBufs.Get().(*[]byte)
	defer lowerBufs.Put(buf)
	if cap(*buf) < len(text) {
		*buf = make([]byte, len(text))
	}
	lower := (*buf)[:len(text)]
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	at := make([][]int, len(d.rules)+len(d.matchers))
	d.keywords().Walk(lower, func(end, n, pattern int64) bool {
		for _, r := range d.byKeyword[pattern] {
			at[r] = append(at[r], int(end-n+1))
		}
		return true
	})
	var out []Finding
	for i, r := range d.rules {
		switch {
		case len(r.Keywords) == 0:
			out = r.matches(text, 0, out)
		case len(at[i]) == 0:
		case r.Anchored:
			out = r.anchored(text, at[i], out)
		case r.Window == [2]int{}:
			out = r.matches(text, 0, out)
		default:
			win := r.Window
			if r.bounded && win[0] == 0 {
				// The byte before the keyword, so that the expression's
				// \b sees it: sk_test_ in task_test_… starts no key.
				win[0] = 1
			}
			for _, w := range windows(at[i], len(text), win) {
				out = r.matches(text[w[0]:w[1]], w[0], out)
			}
		}
	}
	for i, m := range d.matchers {
		pos := at[len(d.rules)+i]
		if len(m.keywords) > 0 && len(pos) == 0 {
			continue
		}
		slices.Sort(pos)
		n := len(out)
		out = m.find(text, pos, out)
		for k := n; k < len(out); k++ {
			if out[k].RuleID == "secret-assignment" && m.id != "secret-assignment" {
				continue
			}
			if !accepted(text[out[k].Start:out[k].End]) {
				out[k].End = out[k].Start
			}
		}
	}
	out = slices.DeleteFunc(out, func(x Finding) bool { return x.End <= x.Start })
	if d.base64 {
		out = d.findBase64(text, depth, out)
	}
	return out
}

// lowerBufs keeps the buffers find lowers texts into.
var lowerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// matches appends r's matches in text, whose offsets are moved by off.
func (r *rule) matches(text string, off int, out []Finding) []Finding {
	for _, m := range r.re().FindAllStringSubmatchIndex(text, -1) {
		s, e := group(m)
		if e-s < 1 || !r.accept(text[s:e]) && !(r.ID == "url-credentials" && sampleAtNamedHost(text, s, e) && r.fits(text[s:e])) ||
			r.ID == "url-credentials" && (sameAsUser(text, s, e) || secretCounted(text[s:e]) && exampleHost(text, s)) ||
			r.ID == "userinfo-password" && !bareUserinfo(text, s, e) {
			continue
		}
		out = append(out, Finding{RuleID: r.ID, Start: off + s, End: off + e})
	}
	return out
}

// group is where the secret of a match is: its first capturing group
// that matched, or the whole match.
func group(m []int) (int, int) {
	for k := 2; k+1 < len(m); k += 2 {
		if m[k] >= 0 {
			return m[k], m[k+1]
		}
	}
	return m[0], m[1]
}

// anchored appends r's matches starting at each of its keywords, at.
func (r *rule) anchored(text string, at []int, out []Finding) []Finding {
	for _, p := range at {
		if r.bounded && p > 0 && wordByte(text[p-1]) && wordByte(text[p]) {
			continue
		}
		m := r.re().FindStringSubmatchIndex(text[p:min(p+r.Window[1], len(text))])
		if m == nil {
			continue
		}
		s, e := group(m)
		if e > s && r.accept(text[p+s:p+e]) {
			out = append(out, Finding{RuleID: r.ID, Start: p + s, End: p + e})
		}
	}
	return out
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// settle orders findings and drops those overlapping an earlier,
// longer one.
func settle(f []Finding) []Finding {
	if len(f) < 2 {
		return f
	}
	slices.SortStableFunc(f, func(a, b Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return (b.End - b.Start) - (a.End - a.Start)
	})
	out := f[:1]
	for _, x := range f[1:] {
		last := &out[len(out)-1]
		if x.Start < last.End {
			if x.End > last.End {
				last.End = x.End
			}
			continue
		}
		out = append(out, x)
	}
	return out
}
