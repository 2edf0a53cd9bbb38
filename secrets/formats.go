package secrets

import "strings"

// A value given to a name that says whose key it is (adobe KEY=…,
// ramp token - '…', apiMaticKey := "…") is that service's key, and a
// service's keys are made of the characters of its format. A value
// named as a service's that holds a character no token alphabet and
// none of the service's formats holds (a '?', '#' or '$' where the
// service's keys are letters and digits) is not its key — a key
// altered, a test's broken value — and is not reported by its name
// alone. What says so is serviceFormats (services.go), learned from
// the detectors of TruffleHog; a name that says no service (password,
// token, API_KEY, client_secret) is left as it was, and so is a
// password under any name.

// serviceFormat is what a service's credentials are made of.
type serviceFormat struct {
	lo, hi uint64 // the ASCII bytes allowed: lo for 0-63, hi for 64-127
	min    int    // the length of the shortest known (not held against a value)
}

// fits reports whether v can be one of the service's credentials: it
// holds no byte outside the token alphabets (letters, digits and
// + / = _ . ~ - :) that none of the service's credentials hold. A
// service has more kinds of credential than the formats known of it,
// so letters, digits and the token alphabets' punctuation, and the
// length, are not held against a value: only a byte that no token is
// made of (? ! # $ % & * @ , ; < > …) and the service's are not.
func (f serviceFormat) fits(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case tokenByte[c]:
		case c < 64:
			if f.lo>>c&1 == 0 {
				return false
			}
		case c < 128:
			if f.hi>>(c-64)&1 == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// tokenByte are the bytes of the alphabets tokens are written in:
// letters, digits, base64's and base64url's, hex's, and the
// separators of ids and keys (. ~ :).
var tokenByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isAlnum(byte(c)) || strings.IndexByte("+/=_.~-:", byte(c)) >= 0
	}
	return t
}()

// serviceMisfit reports whether v, given to the name text[ns:ns+len(name)],
// is named as a known service's (by the name's own words, or the words
// just before it on its line) and fits none of that service's formats.
func serviceMisfit(text string, ns int, name, v string) bool {
	// What follows an escape of the text's carrier (JSON's \n, XML's
	// &#34;) is the carrier's, not the value's.
	for _, esc := range []string{"\\", "&#", "&quot;", "&amp;"} {
		if i := strings.Index(v, esc); i > 0 {
			v = v[:i]
		}
	}
	known := false
	misfit := true
	try := func(w string) {
		if !misfit || len(w) < 3 {
			return
		}
		if f, ok := serviceFormats[w]; ok {
			known = true
			if f.fits(v) {
				misfit = false
			}
		}
	}
	words := nameWords(name)
	// Every run of the name's words, joined: apimatic in apiMaticKey,
	// newrelicpersonalapikey as written.
	for i := range words {
		w := ""
		for j := i; j < len(words) && j < i+4; j++ {
			w += words[j]
			try(w)
		}
	}
	// The words before the name on its line: Using adobe KEY=, Your
	// API2CART key is, ramp token - ….
	j := ns
	for n := 0; n < 2; n++ {
		for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
			j--
		}
		k := j
		for k > 0 && isAlnum(text[k-1]) {
			k--
		}
		if k == j {
			break
		}
		try(strings.ToLower(text[k:j]))
		j = k
	}
	return known && misfit
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
