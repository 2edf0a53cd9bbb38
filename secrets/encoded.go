package secrets

import (
	"encoding/base64"
	"slices"
	"strings"
)

// windows returns the spans of a text of n bytes around its keywords,
// at, w[0] bytes before and w[1] after each, merged where they overlap.
func windows(at []int, n int, w [2]int) [][2]int {
	slices.Sort(at)
	var out [][2]int
	for _, p := range at {
		s := [2]int{max(p-w[0], 0), min(p+w[1], n)}
		if l := len(out); l > 0 && s[0] <= out[l-1][1] {
			out[l-1][1] = max(out[l-1][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}

// findBase64 appends, at depth 0, the runs of base64 in text that
// decode to text holding a secret: the run is then a secret as a whole,
// found by the rule that found what it holds. Base64 of text (a cursor,
// an encoded document) is no secret in itself: only what it holds can
// be.
func (d *Detector) findBase64(text string, depth int, out []Finding) []Finding {
	shapes := depth == 0 && d.matcherOn("token-shape")
	services := d.matcherOn(serviceKeyID)
	b64on := d.base64 && depth < maxDepth
	if !shapes && !b64on && !services {
		return out
	}
	// One pass over the runs of token characters (base64's and names'):
	// the few that are long enough are looked at again, as base64, as
	// a token of a known shape, and as a key after its service's name.
	for i := 0; i < len(text); {
		if !runBytes[text[i]] {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && runBytes[text[j]] {
			j++
		}
		if services && j-i >= 10 {
			out = serviceRun(text, i, j, out)
		}
		if shapes && j-i >= 49 {
			out = shapeRuns(text, i, j, out)
		}
		next := j
		if b64on && j-i >= 32 {
			out, next = d.base64Runs(text, i, j, depth, out)
		}
		i = max(next, j)
	}
	return out
}

// runBytes are the bytes of base64 and of names: letters, digits,
// + / = - _ .
var runBytes = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = b64[c] || nameBytes[c]
	}
	return t
}()

// base64Runs appends the runs of base64 in text[i:j] (and the lines of
// base64 wrapped after it) that decode to text holding a secret, and
// returns where it stopped reading.
func (d *Detector) base64Runs(text string, i, j, depth int, out []Finding) ([]Finding, int) {
	stop := j
	for s := i; s < j; {
		if !b64[text[s]] {
			s++
			continue
		}
		if text[s] == '+' && (s == 0 || text[s-1] == '\n') || text[s] == '=' {
			// A diff's added line: + is its mark, not base64; nor is
			// the = of an assignment.
			s++
			continue
		}
		e := s + 1
		for e < j && b64[text[e]] && !(text[e] == '=' && e+1 < j && text[e+1] != '=') {
			// base64 pads only at its end: an = with more after it
			// gives a name its value (PRIVATE_KEY_B64=LS0tLS1CRUdJTi…),
			// which is looked at alone.
			e++
		}
		// base64's output wrapped at 64 or 76 characters a line (a
		// certificate, base64 of a file): the lines are one run.
		if e == j {
			if joined, end := wrapped(text, s, e); end > e {
				if dec, ok := decode64(joined); ok {
					if f := d.find(dec, depth+1); len(f) > 0 {
						return append(out, Finding{RuleID: f[0].RuleID, Start: s, End: end}), end
					}
				}
			}
		}
		if e-s >= 32 {
			if dec, ok := decode64(text[s:e]); ok {
				if f := d.find(dec, depth+1); len(f) > 0 {
					out = append(out, Finding{RuleID: f[0].RuleID, Start: s, End: e})
				}
			}
		}
		s = e
	}
	return out, stop
}

// maxDepth bounds how many times base64 is looked into: twice reads a
// kubeconfig (its client-key-data is base64 of a PEM key) given as
// base64.
const maxDepth = 2

// wrapped returns the base64 of the lines that start with the run
// text[i:j], when it is a full line of wrapped base64 (40 or more
// characters, a multiple of 4) followed by lines of the same width and
// a last one no longer, and where they end; end is j when it is not.
func wrapped(text string, i, j int) (string, int) {
	w := j - i
	if w < 40 || w%4 != 0 || j >= len(text) || text[j] != '\n' && text[j] != '\r' {
		return "", j
	}
	var b strings.Builder
	b.WriteString(text[i:j])
	end := j
	for k := j; ; {
		if k < len(text) && text[k] == '\r' {
			k++
		}
		if k >= len(text) || text[k] != '\n' {
			break
		}
		k++
		for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
			k++
		}
		l := k
		for l < len(text) && b64[text[l]] {
			l++
		}
		if l == k || l-k > w || l < len(text) && text[l] != '\n' && text[l] != '\r' {
			break
		}
		b.WriteString(text[k:l])
		end = l
		if l-k < w {
			break
		}
		k = l
	}
	if end == j {
		return "", j
	}
	return b.String(), end
}

// b64 holds the bytes of standard and URL base64.
var b64 = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_") {
		t[c] = true
	}
	return t
}()

// decode64 decodes s as standard or URL base64, padded or not, and
// reports whether it gave mostly printable text.
func decode64(s string) (string, bool) {
	s = strings.TrimRight(s, "=")
	var b []byte
	var err error
	if strings.ContainsAny(s, "-_") {
		b, err = base64.RawURLEncoding.DecodeString(s)
	} else {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil || len(b) < 8 {
		return "", false
	}
	printable := 0
	for _, c := range b {
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\r' || c == '\t' {
			printable++
		}
	}
	return string(b), printable*10 >= len(b)*9
}
