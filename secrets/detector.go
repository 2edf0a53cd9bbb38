// Package secrets finds secrets in text and replaces them with markers
// that name what was there ([REDACTED:aws-access-key]). A Detector
// holds the rules (the built-in ones, which cover provider keys,
// credentials in URLs and headers, private key blocks, .env lines and
// high-entropy assignments, plus any a user adds) and an allow-list;
// Find reports where secrets are, Redact replaces them, and the
// functions over messages and sessions apply both to what a store holds,
// for scanning a store, rewriting it, and every way a session leaves
// the machine (exports, hand-off, MCP, shares).
package secrets

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"

	"github.com/loomhq/loom"
)

// Rule is one kind of secret. Regex finds it; the secret is its first
// capturing group (the whole match when it has none), so that the name
// beside a value stays readable in a redacted text.
type Rule struct {
	ID          string `toml:"id"`
	Description string `toml:"description"`
	Regex       string `toml:"regex"`
	// Keywords, when set, are words (compared in lower case) of which a
	// text must hold one for the rule to run on it.
	Keywords []string `toml:"keywords"`
	// Window, when set, runs the expression only on the text around
	// each keyword: Window[0] bytes before it and Window[1] after it
	// (a match must fit in them), which keeps rules with common
	// keywords fast.
	Window [2]int `toml:"-"`
	// Anchored runs the expression once at each keyword, where a match
	// must start, on the Window[1] bytes from there: the fastest way
	// for rules that start with their keyword.
	Anchored bool `toml:"-"`
	// MinEntropy is the Shannon entropy in bits per character below
	// which a match is not a secret (0: any).
	MinEntropy float64 `toml:"min_entropy"`
	// Placeholders drops values that read as placeholders or references
	// (changeme, your-key-here, xxxx, ${VAR}, os.environ …).
	Placeholders bool `toml:"-"`
	// NeedDigit and NeedCase drop values without a digit, or without
	// both upper and lower case letters: words and identifiers.
	NeedDigit bool `toml:"-"`
	NeedCase  bool `toml:"-"`
	// NotCode drops values that read as code: an identifier, a call,
	// a dotted name (apiKey: PropTypes.string).
	NotCode bool `toml:"-"`
}

// Config adds to the built-in rules: config.toml's [secrets].
type Config struct {
	// Rules are more rules ([[secrets.rules]]); one with the id of a
	// built-in rule replaces it.
	Rules []Rule `toml:"rules"`
	// Allow are regular expressions: a secret one of them matches is
	// not reported (a known test key, a project's fake fixtures).
	Allow []string `toml:"allow"`
	// Disable names built-in rules not to run.
	Disable []string `toml:"disable"`
	// AllowIDs are the ids (ValueID) of values never reported: what
	// `loom secrets allow` keeps, read from secrets-allow.txt beside
	// config.toml, so that a false positive is not redacted again.
	AllowIDs []string `toml:"-"`
}

// ValueID names a value without showing it: the first 16 hex digits of
// its SHA-256. Scans report it beside each finding, and `loom secrets
// allow ID` keeps it, so that the value is never reported again.
func ValueID(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:8])
}

// Finding is one secret in a text: the rule that found it and where it
// is, as byte offsets.
type Finding struct {
	RuleID     string
	Start, End int
	// ID names the value found without showing it (ValueID of the
	// value as read: escapes decoded).
	ID string
	// value is the value as read, for its echoes (Echoes); "" for the
	// start of a key cut short, which is only a piece of it.
	value string
	cut   bool
}

// hinted is what f found in text as a person reads it (escapes
// decoded), for its hint; the bytes of text where it was cut short.
func (f Finding) hinted(text string) string {
	if f.value != "" {
		return f.value
	}
	return text[f.Start:f.End]
}

// String shows where f is and what found it, never the value.
func (f Finding) String() string {
	return fmt.Sprintf("%s [%d:%d] %s", f.RuleID, f.Start, f.End, f.ID)
}

// Detector finds secrets. It is safe for concurrent use.
type Detector struct {
	rules    []*rule
	matchers []matcher
	// keywords finds every rule's and matcher's keywords in one pass
	// over a text; byKeyword lists, by keyword, the rules (indexes of
	// rules, then of matchers after them) that have it.
	keywords  *ahocorasick.Trie
	byKeyword [][]int
	allow     []*regexp.Regexp
	// allowIDs are the ids (ValueID) of values never reported (loom
	// secrets allow).
	allowIDs map[string]bool
	// base64 looks into base64 runs (the built-in rules are on).
	base64 bool
	// memo, when set, is what Find found in the texts read last
	// (Remembering).
	memo *memo
}

type rule struct {
	Rule
	re *regexp.Regexp
	// bounded: the expression starts at a word boundary, which an
	// anchored run checks by hand.
	bounded bool
}

// detectorVersion changes whenever the built-in matchers find
// differently, so that scans remembered under an older one start over.
const detectorVersion = 8

// MarkerPrefix starts every marker Redact writes.
const MarkerPrefix = loom.RedactedPrefix

// Marker is what replaces a secret found by rule id.
func Marker(id string) string { return MarkerPrefix + id + "]" }

// defaultDetector is built on first use, not at start: compiling the
// rules took 8 ms and 2 MB of every loom process, most of which (a
// listing, the status line) never look for a secret.
var defaultDetector = sync.OnceValue(func() *Detector {
	d, err := New(Config{})
	if err != nil {
		panic(err)
	}
	return d
})

// Default is the Detector with the built-in rules only.
func Default() *Detector { return defaultDetector() }

// Rules returns the rules d runs, in order: the expression rules, then
// the built-in matchers (with no expression).
func (d *Detector) Rules() []Rule {
	out := make([]Rule, 0, len(d.rules)+len(d.matchers))
	for _, r := range d.rules {
		out = append(out, r.Rule)
	}
	for _, m := range d.matchers {
		out = append(out, Rule{ID: m.id, Description: m.description, Keywords: m.keywords})
	}
	return out
}

// builtinID reports whether id names a built-in rule or matcher (or one
// retired).
func builtinID(id string) bool {
	return slices.ContainsFunc(builtin, func(r Rule) bool { return r.ID == id }) ||
		slices.ContainsFunc(matchers, func(m matcher) bool { return m.id == id }) ||
		slices.Contains(retired, id) || id == dotenvID
}

// New returns a Detector with the built-in rules and cfg's.
func New(cfg Config) (*Detector, error) {
	d := &Detector{base64: true}
	replaced := func(id string) bool {
		return slices.Contains(cfg.Disable, id) || slices.ContainsFunc(cfg.Rules, func(c Rule) bool { return c.ID == id })
	}
	all := make([]Rule, 0, len(builtin)+len(cfg.Rules))
	for _, r := range builtin {
		if !replaced(r.ID) {
			all = append(all, r)
		}
	}
	for _, m := range matchers {
		if !replaced(m.id) {
			d.matchers = append(d.matchers, m)
		}
	}
	for _, id := range cfg.Disable {
		if !builtinID(id) {
			return nil, fmt.Errorf("secrets: disable names no built-in rule: %q", id)
		}
	}
	for _, r := range cfg.Rules {
		if !validID(r.ID) {
			return nil, fmt.Errorf("secrets: rule id %q must be letters, digits and dashes", r.ID)
		}
		if r.Regex == "" {
			return nil, fmt.Errorf("secrets: rule %s has no regex", r.ID)
		}
	}
	all = append(all, cfg.Rules...)
	for _, r := range all {
		expr := r.Regex
		bounded := strings.HasPrefix(expr, `\b(`)
		if !r.Anchored && r.Window == [2]int{} && bounded && len(r.Keywords) > 0 && prefixRule(r) {
			// A token that starts with its keyword: the expression runs
			// once at each keyword, where a match must start.
			r.Anchored, r.Window = true, [2]int{0, 1024}
		}
		if r.Anchored {
			expr = `\A(?:` + expr + `)`
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("secrets: rule %s: %w", r.ID, err)
		}
		kw := make([]string, len(r.Keywords))
		for i, k := range r.Keywords {
			kw[i] = strings.ToLower(k)
		}
		r.Keywords = kw
		d.rules = append(d.rules, &rule{Rule: r, re: re, bounded: bounded})
	}
	var kw patterns
	for i, r := range d.rules {
		for _, k := range r.Keywords {
			kw.add(k, i)
		}
	}
	for i, m := range d.matchers {
		for _, k := range m.keywords {
			kw.add(k, len(d.rules)+i)
		}
	}
	d.keywords, d.byKeyword = kw.build(), kw.of
	for _, a := range cfg.Allow {
		re, err := regexp.Compile(a)
		if err != nil {
			return nil, fmt.Errorf("secrets: allow %q: %w", a, err)
		}
		d.allow = append(d.allow, re)
	}
	if len(cfg.AllowIDs) > 0 {
		d.allowIDs = map[string]bool{}
		for _, id := range cfg.AllowIDs {
			d.allowIDs[strings.ToLower(id)] = true
		}
	}
	return d, nil
}

// patterns are the distinct patterns of one automaton, each with the
// items (by index) it stands for: the rules' keywords, a block of
// echoes' ends.
type patterns struct {
	index map[string]int
	words []string
	of    [][]int // by pattern
}

// add makes k stand for item i too.
func (p *patterns) add(k string, i int) {
	if p.index == nil {
		p.index = map[string]int{}
	}
	j, ok := p.index[k]
	if !ok {
		j = len(p.words)
		p.index[k] = j
		p.words = append(p.words, k)
		p.of = append(p.of, nil)
	}
	if !slices.Contains(p.of[j], i) {
		p.of[j] = append(p.of[j], i)
	}
}

// build returns the automaton of the patterns, whose matches are
// numbered as p.of.
func (p *patterns) build() *ahocorasick.Trie {
	return ahocorasick.NewTrieBuilder().AddStrings(p.words).Build()
}

// prefixRule reports whether every keyword of r is where its
// expression's match starts: a literal prefix of the token it finds.
func prefixRule(r Rule) bool {
	body := strings.ToLower(strings.TrimPrefix(r.Regex, `\b(`))
	body = strings.TrimPrefix(body, "(?:")
	for _, k := range r.Keywords {
		if !strings.HasPrefix(body, k) && !strings.Contains(body, "|"+k) && !strings.Contains(body, "("+k) {
			return false
		}
	}
	return true
}

func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

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
	d.keywords.Walk(lower, func(end, n, pattern int64) bool {
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
	for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
		s, e := group(m)
		if e-s < 1 || !r.accept(text[s:e]) || r.ID == "url-credentials" && (sameAsUser(text, s, e) || secretCounted(text[s:e]) && exampleHost(text, s)) {
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
		m := r.re.FindStringSubmatchIndex(text[p:min(p+r.Window[1], len(text))])
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

func hasAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// matcherOn reports whether the built-in matcher id runs.
func (d *Detector) matcherOn(id string) bool {
	return slices.ContainsFunc(d.matchers, func(m matcher) bool { return m.id == id })
}

// allowedValue reports whether the allow-list names v.
func (d *Detector) allowedValue(v string) bool {
	if len(d.allowIDs) > 0 && d.allowIDs[ValueID(v)] {
		return true
	}
	for _, a := range d.allow {
		if a.MatchString(v) {
			return true
		}
	}
	return false
}

// allowed drops the findings of text that the allow-list names, and
// the published examples whatever rule found them.
func (d *Detector) allowed(text string, f []Finding) []Finding {
	return slices.DeleteFunc(f, func(x Finding) bool {
		v := text[x.Start:x.End]
		return exampleValues[v] || d.allowedValue(v)
	})
}

// accepted reports whether a value any rule found can be a secret: not
// a marker, not a documented example, not a placeholder.
func accepted(v string) bool {
	l := strings.ToLower(v)
	if strings.HasPrefix(v, MarkerPrefix) || strings.Contains(l, "example") || strings.Contains(v, MarkerPrefix) ||
		strings.HasPrefix(v, "AKIAIOSFODNN7") || strings.HasPrefix(v, "wJalrXUtnFEMI/K7MDENG") || strings.Contains(l, "helloworld") {
		// The documented example keys (AKIAIOSFODNN7EXAMPLE and
		// wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, and their start
		// with other letters after it: AKIAIOSFODNN7SECRETS,
		// …bPxRfiCYESAMPLEKEY) are everywhere in code and docs, and no
		// secret; nor is a key's shape filled with "hello world"
		// (glptt-hellOworld380_testin).
		return false
	}
	if strings.Trim(v, "•●*") == "" {
		// A password shown masked (••••••••).
		return false
	}
	return !fillerBody(v) && !exampleValue(v)
}

// exampleValues are keys published as examples in projects' docs and
// copied from there into countless repositories and tutorials, as
// AKIAIOSFODNN7EXAMPLE is: no one's secret (docs/security.md says where
// each is from).
var exampleValues = map[string]bool{
	// The bcrypt hashes of golang.org/x/crypto/bcrypt's tests (of
	// "allmine" and its too long password), copied with the package.
	"$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga": true,
	"$2$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga":  true,
	"$2a$10$XajjQvNhvvRt5GSeFk1xFe5l47dONXg781AmZtd869sO8zfsHuw7C": true,
	"$2a$10$LK9XRuhNxHHCvjX3tdkRKei1QiCDUKrJRhZv7WWZPuQGRUM92rOUa": true,
	// The Ceph keys of the Kubernetes project's volume examples (rbd,
	// cephfs, persistent-volume-provisioning/rbd).
	"AQB16V1VoF5mExAA5kCQs7bBj8VULRw26C84HA==": true,
	"AQDCZLtXORt+JhAAAXhDV4rlgpl2ccp4zDVROA==": true,
	"AQAMgXhVwBCeDhAA9nlPaFyfUSatGD4drFWDvQ==": true,
	// The storage account key of its azure_file example.
	"xIF1zJbnnojFLMSkBp50mx02rHsMK2sjU7mFt4L13hoB7drAaJ8jD6+A443jJogV7y2FUOhQCWPmM6YaNHy7qg==": true,
	// The passwords of NuGet's nuget.config reference
	// (packageSourceCredentials' ClearTextPassword).
	"33f!!lloppa":    true,
	"hal+9ooo_da!sY": true,
	// The public, search-only Algolia key of yarn's website, in its
	// sources and every copy of them.
	"6fe4476ee5a1832882e326b506d14126": true,
	// A Google API key of the Firebase Android SDK's examples.
	"AIzayDNSXIbFmlXbIE6mCzDLQAqITYefhixbX4A": true,
}

// exampleValue reports whether v, or what it decodes to from base64
// (a Secret's data), is one of exampleValues.
func exampleValue(v string) bool {
	if exampleValues[v] {
		return true
	}
	if len(v) < 40 || len(v) > 200 {
		return false
	}
	d, ok := plain64(v)
	return ok && exampleValues[d]
}

func (r *rule) accept(v string) bool {
	return !r.standIn(v) && r.fits(v)
}

// standIn reports whether v, found by the rule, stands for a secret
// rather than being one: a value the allow-list or the rule's filler
// takes, a placeholder, a word, a shell's variable, base64 of a test's
// word.
func (r *rule) standIn(v string) bool {
	if i := strings.Index(v, "</"); i > 0 {
		// curl -u username:token</command>: the value ends where
		// the XML element that holds it closes.
		v = v[:i]
	}
	if r.ID == "sentry-token" && shortSentrySecret(v) {
		return true
	}
	if !accepted(fillerPart(r.ID, v)) {
		return true
	}
	if r.ID == "url-credentials" && secretCounted(v) {
		return false
	}
	if r.Placeholders && (placeholder(v) || wordValues[strings.ToLower(v)] || placeholderWord(v)) {
		return true
	}
	if weak[r.ID] && weakWord(v) {
		return true
	}
	if r.Placeholders && strings.HasPrefix(v, "$") && reservedStart(v, false) {
		// curl --user "$USER:$GITHUB_PASSWORD": a shell's variable.
		return true
	}
	if f := fillerPart(r.ID, v); r.ID == "slack-token" && !strings.ContainsAny(f, "0123456789") && identifierLike(f) {
		// xoxe.xoxp-1-SlackAppConfigurationAccessTokenHere: words
		// where the secret goes.
		return true
	}
	if r.ID == "password-argument" && (placeholder(v) || reference(v) || reservedStart(v, false)) {
		return true
	}
	if r.Placeholders {
		// dGVzdC1hcGkta2V5Cg== (test-api-key): base64 of a test's
		// word, as echo and base64 make it, is no secret either.
		if d, ok := plain64(v); ok && weakPlain(d) {
			return true
		}
	}
	return false
}

// shortSentrySecret reports whether v, a Sentry organization token
// (sntrys_, base64 of its claims, _, its secret), has a secret of other
// than the 43 characters Sentry gives it: a test's token made to fail.
func shortSentrySecret(v string) bool {
	body, ok := strings.CutPrefix(v, "sntrys_")
	i := strings.LastIndexByte(body, '_')
	return ok && i > 0 && len(body)-i-1 != 43
}

// fits reports whether v has what the rule asks of a secret's shape:
// no stub key, no code, a digit, both cases, the entropy.
func (r *rule) fits(v string) bool {
	if r.ID == "private-key" && stubKey(v) {
		return false
	}
	if r.NotCode && (dottedIdentifier(v) || codeLike(v) || placeholderWord(v)) {
		return false
	}
	if r.NeedDigit && !strings.ContainsAny(v, "0123456789") {
		return false
	}
	if r.NeedCase && (strings.ToLower(v) == v || strings.ToUpper(v) == v) {
		return false
	}
	return r.MinEntropy == 0 || Entropy(v) >= r.MinEntropy
}

// fillerPart is the part of a value of rule id that is to be random:
// an X bearer token starts with its A's, and a Slack token's numbers
// are a team's and a user's ids, its last part its secret.
func fillerPart(id, v string) string {
	switch id {
	case "twitter-bearer-token":
		return strings.TrimLeft(v, "A")
	case "slack-token":
		if i := strings.LastIndexByte(v, '-'); i >= 0 && len(v)-i > 8 {
			return v[i+1:]
		}
	}
	return v
}

// weak are the rules that find passwords by where they stand (a URL, a
// command line, a connection string): a placeholder word there is no
// password (postgres://user:password@, redis-cli -a bitnami).
var weak = map[string]bool{"url-credentials": true, "mysql-password-flag": true, "connection-string-password": true}

// secretCounted reports whether v is the word secret and three digits
// or more (secret123): a tutorial's password under a name
// (password=secret123, TruffleHog's negative case), but the password a
// URL sends to a host not kept for documentation
// (https://user:secret123@api.acme.io/; example.com's are left out
// before).
func secretCounted(v string) bool {
	d, ok := strings.CutPrefix(v, "secret")
	return ok && len(d) >= 3 && allDigits(d)
}

// fillerBody reports whether v is a key's shape filled with filler
// rather than a key: a run of eight of one character (sk_test_xxxxxxxx,
// AKIA0000000000000000), or counting (1234567890, abcdefgh, 1a2b3c4d).
func fillerBody(v string) bool {
	if len(v) > 128 {
		// A private key or a long token has runs of its own (zeros
		// encode as AAAA…), but not of x (ops_eyJxxxx…: a token's
		// shape filled in).
		l := strings.ToLower(v)
		return strings.Contains(l, strings.Repeat("x", 24))
	}
	run := 1
	for i := 1; i < len(v); i++ {
		c := v[i] | 0x20
		if c == v[i-1]|0x20 && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '*' || c == '.') {
			run++
			if run >= 8 {
				return true
			}
			continue
		}
		run = 1
	}
	l := strings.ToLower(v)
	if strings.Contains(l, "12345678") || strings.Contains(l, "abcdefgh") || strings.Contains(l, "xxxx") || pairSaidOver(l) {
		return true
	}
	// Counting again and again (a123b45c6d78e9f0…): documentation's
	// stand-in for a key.
	runs := 0
	for _, c := range []string{"123", "234", "345", "456", "567", "678", "789", "890"} {
		runs += strings.Count(l, c)
	}
	return runs >= 4 && runs*16 >= len(l) || countingInTurn(l)
}

// pairSaidOver reports whether l holds two characters said over eight
// times in a row (ghp_ababab…): a token's shape filled in.
func pairSaidOver(l string) bool {
	for i := 0; i+16 <= len(l); i++ {
		if l[i] != l[i+1] && l[i:i+16] == strings.Repeat(l[i:i+2], 8) {
			return true
		}
	}
	return false
}

// countingInTurn reports whether l is letters and digits counting up
// in turn (1a2b3c4d, a1b2c3d4e5f6), four of each or more: a stand-in
// for a key.
func countingInTurn(l string) bool {
	if len(l) < 8 || len(l) > 64 {
		return false
	}
	var last [2]byte
	var n [2]int
	for i := 0; i < len(l); i++ {
		c := l[i]
		k := 0
		switch {
		case c >= 'a' && c <= 'z':
			k = 1
		case c < '0' || c > '9':
			return false
		}
		if i > 0 && (l[i-1] >= 'a') == (k == 1) {
			// Two of a kind side by side: not in turn.
			return false
		}
		if n[k] > 0 && c != last[k]+1 {
			return false
		}
		last[k] = c
		n[k]++
	}
	return n[0] >= 4 && n[1] >= 4
}

var placeholderWords = []string{
	"example", "changeme", "change_me", "change-me", "changeit", "placeholder", "redacted", "your_", "your-",
	"yourkey", "yourtoken", "yoursecret", "yourpassword", "yourapikey", "your.", "replace_me", "replace-me",
	"replaceme", "replace_with", "replace-with", "insert_", "insert-", "enter_", "enter-", "dummy", "xxxx",
	"***", "...", "…", "#{", "\\(", "\\#(", "{%", "process.env", "os.environ", "getenv", "env[",
	"not_a_real", "not-a-real", "notreal", "fake_", "fake-", "_here", "-here", "todo", "fixme", "12345678",
	"anoncvs", "anonymous",
}

// tutorialPasswords are the passwords of tutorials: a value is one when
// it is one of them whole, maybe with a few digits or signs after it
// (P@ssw0rd!, qwerty123), never because it holds one among
// characters of its own (s3cr3tP4ss, myR3alP@ssw0rd are someone's).
var tutorialPasswords = []string{"password123", "p@ssw0rd", "p@ssword", "passw0rd", "letmein", "qwerty"}

// tutorialPassword reports whether l, lower case, is one of
// tutorialPasswords with at most three digits or signs after it.
func tutorialPassword(l string) bool {
	for _, w := range tutorialPasswords {
		if rest, ok := strings.CutPrefix(l, w); ok && len(rest) <= 3 && strings.Trim(rest, "0123456789!.#*") == "" {
			return true
		}
	}
	return false
}

// pyFormat is a name of Python's % formatting (%(password)s): a
// reference. A %( that no name and ) follow is a key's characters.
var pyFormat = regexp.MustCompile(`%\([A-Za-z_][A-Za-z0-9_.]*\)`)

// placeholder reports whether v reads as a placeholder or a reference
// to a secret kept elsewhere rather than a secret.
func placeholder(v string) bool {
	l := strings.ToLower(v)
	if hasAny(l, placeholderWords) || tutorialPassword(l) || pyFormat.MatchString(v) || templated(v) {
		return true
	}
	// [password], {token}: a word in brackets.
	if len(l) > 2 && (l[0] == '[' && l[len(l)-1] == ']' || l[0] == '{' && l[len(l)-1] == '}' || l[0] == '<' && l[len(l)-1] == '>') {
		return true
	}
	// <your-key>, sk-<token>, <user>:<pass>: names in angle brackets
	// make the value, with little else. A value that holds <…> among
	// more of its own (Xq7<a>Lm2Rz9Tk4) is a password like any other.
	if angled(l) {
		return true
	}
	// A run of one character (aaaaaaaa, 00000000).
	return strings.Count(l, l[:1]) == len(l) || counted(l, 4) || alphabetCounted(l)
}

// alphabetCounted reports whether l is the alphabet from a, maybe with
// a letter skipped, and a count from one after it (abcefg123,
// abcde-1234): a value typed to fill a form's field.
func alphabetCounted(l string) bool {
	if l == "" || l[0] != 'a' {
		return false
	}
	i := 1
	for i < len(l) && l[i] > l[i-1] && l[i]-l[i-1] <= 2 && l[i] <= 'z' {
		i++
	}
	if i < 4 {
		return false
	}
	if i < len(l) && (l[i] == '-' || l[i] == '_') {
		i++
	}
	d := l[i:]
	return len(d) >= 3 && strings.HasPrefix("1234567890", d)
}

// counted reports whether l is a word of at most letters letters and a
// count from one (api-1234, key_123, spu-12345): a stand-in for a key
// in docs and tests.
func counted(l string, letters int) bool {
	i := 0
	for i < len(l) && l[i] >= 'a' && l[i] <= 'z' {
		i++
	}
	if i == 0 || i > letters {
		return false
	}
	if i < len(l) && (l[i] == '-' || l[i] == '_') {
		i++
	}
	d := l[i:]
	return len(d) >= 3 && strings.HasPrefix("1234567890", d)
}

// angled reports whether l is made of names in angle brackets (<token>,
// <your-api-key>) and at most five letters and digits besides (sk-,
// ghp_, a separator).
func angled(l string) bool {
	rest := 0
	names := 0
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c == '<' {
			if j := strings.IndexByte(l[i:], '>'); j > 1 && identLikeAny(strings.NewReplacer("-", "_", " ", "_", ".", "_").Replace(l[i+1:i+j])) {
				names++
				i += j
				continue
			}
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			rest++
		}
	}
	return names > 0 && rest <= 5
}

// Entropy is the Shannon entropy of s in bits per byte.
func Entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var n [256]int
	for i := 0; i < len(s); i++ {
		n[s[i]]++
	}
	e, l := 0.0, float64(len(s))
	for _, c := range n {
		if c > 0 {
			p := float64(c) / l
			e -= p * math.Log2(p)
		}
	}
	return e
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

// Redact returns text with every secret replaced by its marker, and how
// many it replaced.
func (d *Detector) Redact(text string) (string, int) { return d.redact(text, nil) }

// redact is Redact, keeping in found (when not nil) the values it
// replaced, for their echoes.
func (d *Detector) redact(text string, found *Echoes) (string, int) {
	f := d.Find(text)
	if len(f) == 0 {
		return text, 0
	}
	found.add(text, f)
	return marked(text, f, ""), len(f)
}

// marked returns text with each of findings f replaced by mark and its
// rule's marker.
func marked(text string, f []Finding, mark string) string {
	var b strings.Builder
	b.Grow(len(text) + (len(mark)+24)*len(f))
	at := 0
	for _, x := range f {
		b.WriteString(text[at:x.Start])
		b.WriteString(mark + Marker(x.RuleID))
		at = x.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// RedactCut is Redact for a text that was cut short at its end when cut
// is set (and does not say so with "…"): a key of which only the start
// is left is redacted too.
func (d *Detector) RedactCut(text string, cut bool) (string, int) {
	return d.redactCut(text, cut, nil)
}

func (d *Detector) redactCut(text string, cut bool, found *Echoes) (string, int) {
	if !cut || strings.HasSuffix(text, Cut) {
		return d.redact(text, found)
	}
	r, n := d.redact(text+Cut, found)
	return strings.TrimSuffix(r, Cut), n
}

// Hint shows a secret as far as a report may: its first and last four
// characters when it is long enough that they give it away no more
// than its kind does, less when it is shorter, and never the rest.
func Hint(secret string) string {
	r := []rune(secret)
	switch {
	case len(r) >= 24:
		return string(r[:4]) + "…" + string(r[len(r)-4:])
	case len(r) >= 12:
		return string(r[:2]) + "…" + string(r[len(r)-2:])
	case len(r) >= 8:
		return string(r[:1]) + "…" + string(r[len(r)-1:])
	}
	// Too short to show any of it: how long it is helps find it.
	return fmt.Sprintf("…(%d)", len(r))
}

// Fingerprint names d's rules and allow-list: two Detectors with the
// same fingerprint find the same secrets, so a scan remembered under it
// holds for d.
func (d *Detector) Fingerprint() string {
	h := sha256.New()
	for _, r := range d.rules {
		fmt.Fprintf(h, "%s\x00%s\x00%q\x00%v\x00%v\x00", r.ID, r.Regex, r.Keywords, r.MinEntropy, r.Window)
	}
	for _, m := range d.matchers {
		fmt.Fprintf(h, "matcher\x00%s\x00", m.id)
	}
	fmt.Fprintf(h, "version\x00%d\x00", detectorVersion)
	for _, a := range d.allow {
		fmt.Fprintf(h, "allow\x00%s\x00", a)
	}
	ids := slices.Sorted(maps.Keys(d.allowIDs))
	for _, id := range ids {
		fmt.Fprintf(h, "id\x00%s\x00", id)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// sameAsUser reports whether the password text[s:e] of a URL is its
// user's name again (postgresql://umami:umami@…): a default, not a
// secret.
func sameAsUser(text string, s, e int) bool {
	k := strings.LastIndex(text[max(0, s-200):s], "://")
	if k < 0 {
		return false
	}
	user := text[max(0, s-200)+k+3 : s]
	user = strings.TrimSuffix(user, ":")
	return user != "" && strings.EqualFold(user, text[s:e])
}

// stubKey reports whether v is a whole private key block whose body is
// too short to be a key (-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n
// -----END …): a stand-in in an example file.
func stubKey(v string) bool {
	end := strings.Index(v, "-----END")
	if end < 0 {
		return false
	}
	start := strings.Index(v[5:], "-----")
	if start < 0 {
		return false
	}
	body := v[5+start+5 : end]
	n := 0
	for i := 0; i < len(body); i++ {
		if c := body[i]; c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			n++
		}
	}
	return n < 40
}
