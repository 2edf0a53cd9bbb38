package secrets

import (
	"encoding/json"
	"math/bits"
	"strings"
)

// A value given to a name that says whose key it is (adobe KEY=…,
// ramp token - '…', apiMaticKey := "…") is that service's key, and a
// service's keys have formats: the characters each is made of and its
// length. A value named as a known service's that holds a character no
// token alphabet has ('?', '#', '$', '!' …) and fits none of the
// service's formats is not the service's key — a key altered, a test's
// broken value — and is not reported by its name alone. A value made
// of token characters alone is left to the other rules even when it
// fits no known format, since a service has more kinds of credential
// than the formats known of it (an Asana client secret is not the
// token TruffleHog knows), unless it has the one length a format
// fixes and misses it by a letter or two (lengthMisfit). What says so
// is services (services.go), learned from the detectors of TruffleHog;
// a name that says no service (password, token, API_KEY, client_secret)
// is left as it was, and so is a password under any name.

// serviceFormat is one format of a service's credentials.
type serviceFormat struct {
	lo, hi   uint64 // the ASCII bytes allowed: lo for 0-63, hi for 64-127
	min, max int    // its least and greatest length
}

// digitBits and letterBits are the digits (in a format's lo) and the
// letters of both cases (in its hi).
const (
	digitBits  = 0x3ff000000000000
	letterBits = 0x7fffffe07fffffe
)

// allows reports whether the format has byte c.
func (f serviceFormat) allows(c byte) bool {
	switch {
	case c < 64:
		return f.lo>>c&1 == 1
	case c < 128:
		return f.hi>>(c-64)&1 == 1
	}
	return false
}

// fits reports whether v is of the format.
func (f serviceFormat) fits(v string) bool {
	if len(v) < f.min || len(v) > f.max {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !f.allows(v[i]) {
			return false
		}
	}
	return true
}

// fitsLetters reports whether v is of a grouped format but for its
// letters' case and range: a key the format fixes to upper-case hex in
// a UUID's groups given with letters of both cases (coinapi SECRET
// fa327aA1-23ZC-…), as examples alter a key. Its length and every byte
// that is no letter must fit, and two or more of those must be
// separators (- _ .): the groups say the shape, not the letters.
func (f serviceFormat) fitsLetters(v string) bool {
	if len(v) < f.min || len(v) > f.max || f.hi&letterBits == 0 {
		return false
	}
	seps := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c|0x20 >= 'a' && c|0x20 <= 'z':
		case !f.allows(c):
			return false
		case c == '-' || c == '_' || c == '.':
			seps++
		}
	}
	return seps >= 2
}

// misfits reports whether v fits none of formats and holds a byte of
// no token alphabet, or has the length of one of them (lengthMisfit).
func misfits(formats []serviceFormat, v string) bool {
	foreign := false
	for i := 0; i < len(v); i++ {
		if !tokenByte[v[i]] {
			foreign = true
			break
		}
	}
	if !foreign {
		return lengthMisfit(formats, v)
	}
	for _, f := range formats {
		if !(f.anyText() && f.max-f.min >= 4) && f.fits(v) {
			return false
		}
	}
	return true
}

// lengthMisfit reports whether v, of token characters, has the one
// length a format of the service fixes (api2cart's 32, kucoin's
// 24) yet fits none of the service's formats, by one or two letters
// out of that format's alphabet (a J in hex digits, an X in lower
// case, a _ where the format is of letters and digits alone): that key
// altered. A value of another length, with more bytes out, or with a
// separator the format lacks where it has others (an = where it knows
// - and _), may be another kind of the service's credential than the
// formats known of it, and is left to the other rules.
func lengthMisfit(formats []serviceFormat, v string) bool {
	fixed := false
	for _, f := range formats {
		if f.anyText() && f.max-f.min >= 4 {
			continue
		}
		if f.fits(v) {
			return false
		}
		if n, alnum := f.outside(v); f.min == f.max && f.min == len(v) && n <= 2 && (alnum == n || f.alnumOnly()) {
			fixed = true
		}
	}
	return fixed
}

// alnumOnly reports whether the format is of letters and digits
// alone.
func (f serviceFormat) alnumOnly() bool {
	return f.lo&^digitBits == 0 && f.hi&^letterBits == 0
}

// outside counts the bytes of v the format does not allow, and of
// them the letters and digits.
func (f serviceFormat) outside(v string) (n, alnum int) {
	for i := 0; i < len(v); i++ {
		if !f.allows(v[i]) {
			n++
			if isAlnum(v[i]) {
				alnum++
			}
		}
	}
	return n, alnum
}

// anyText reports whether the format allows nearly every printable
// byte. Of a length that varies, it is a user's name, an e-mail
// address or a URL beside a key, and says nothing of the key's own
// alphabet; of one length, it is a key made of any byte.
func (f serviceFormat) anyText() bool {
	return bits.OnesCount64(f.lo)+bits.OnesCount64(f.hi) >= 85
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
// just before it on its line) and misfits that service's formats.
func serviceMisfit(text string, ns int, name, v string) bool {
	// What follows an escape of the text's carrier (JSON's \n, XML's
	// &#34;) is the carrier's, not the value's.
	for _, esc := range []string{"\\", "&#", "&quot;", "&amp;"} {
		if i := strings.Index(v, esc); i > 0 {
			v = v[:i]
		}
	}
	fs, known := namedFormats(text, ns, name)
	return known && misfits(fs, v)
}

// namedFormats returns the formats of the services that the name
// text[ns:ns+len(name)] says, by its own words, the words just before
// it on its line, or, for a URL's query parameter, the URL's host;
// known is whether it says any.
func namedFormats(text string, ns int, name string) (fs []serviceFormat, known bool) {
	formats := services().formats
	try := func(w string) {
		if len(w) < 3 {
			return
		}
		if f, ok := formats[w]; ok {
			known = true
			fs = append(fs, f...)
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
	if ns > 0 && (text[ns-1] == '?' || text[ns-1] == '&') {
		// A URL's query parameter: the service is the host's
		// (https://api.bscscan.com/…?apikey=…).
		for _, label := range strings.Split(urlHost(text, ns-1), ".") {
			try(strings.ToLower(label))
		}
	}
	return fs, known
}

// urlHost returns the host of the URL whose query starts at q, or "".
func urlHost(text string, q int) string {
	s := q
	for s > 0 && q-s < 512 && text[s-1] > ' ' && strings.IndexByte("\"'`<>", text[s-1]) < 0 {
		s--
	}
	u := text[s:q]
	i := strings.Index(u, "://")
	if i < 0 {
		return ""
	}
	u = u[i+3:]
	if k := strings.IndexAny(u, "/?#"); k >= 0 {
		u = u[:k]
	}
	if k := strings.LastIndexByte(u, '@'); k >= 0 {
		u = u[k+1:]
	}
	if k := strings.IndexByte(u, ':'); k >= 0 {
		u = u[:k]
	}
	return u
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// alteredKey reports whether v, given to the name text[ns:ns+len(name)],
// is a key of 32 characters or more made of a token's alphabet but for
// one byte ('?', '!', '#', '$' …) that no format of the service the
// name says has: a key altered — a test's broken value, a copy with a
// stray byte — and not a password a person chose, which is shorter,
// nor a generated one, whose generator puts a symbol in every few
// characters. A service whose keys hold such a byte (Salesforce's
// 00D…!…) says so by its formats; a format of any byte says so only
// of a key of its length (Eden AI's 173).
// An escape of the value's carrier (%2F, \", &amp;), a quote and a
// URL's userinfo are not such a byte.
func alteredKey(text string, ns int, name, v string) bool {
	if len(v) < 32 || strings.Contains(v, "://") {
		return false
	}
	stray := -1
	for i := 0; i < len(v); i++ {
		c := v[i]
		if tokenByte[c] {
			continue
		}
		if strings.IndexByte("%\\&'\"`", c) >= 0 || c <= ' ' || c >= 0x7f || stray >= 0 {
			return false
		}
		stray = i
	}
	if stray < 0 || !letterAndDigit(v) || !random(v, 0.75) {
		// A phrase a person wrote (my-jwt-secret-for-production!) is
		// theirs, whatever byte it holds.
		return false
	}
	fs, _ := namedFormats(text, ns, name)
	for _, f := range fs {
		if f.anyText() && f.max-f.min < 4 && f.fits(v) || !f.anyText() && f.allows(v[stray]) {
			return false
		}
	}
	return true
}

// brokenJWT reports whether v has a JSON Web Token's shape (eyJ, then
// parts parted by dots) but a header that is not base64 of JSON: a
// token altered, which no service would take.
func brokenJWT(v string) bool {
	dot := strings.IndexByte(v, '.')
	if !strings.HasPrefix(v, "eyJ") || dot < 0 || strings.Count(v, ".") != 2 {
		return false
	}
	h, ok := decode64(v[:dot])
	return !ok || !json.Valid([]byte(h))
}
