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
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
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
}

// Finding is one secret in a text: the rule that found it and where it
// is, as byte offsets.
type Finding struct {
	RuleID     string
	Start, End int
}

// Detector finds secrets. It is safe for concurrent use.
type Detector struct {
	rules       []*rule
	highEntropy *rule
	// keywords finds every rule's keywords in one pass over a text;
	// byKeyword lists, by keyword, the rules that have it.
	keywords  *ahocorasick.Trie
	byKeyword [][]int
	allow     []*regexp.Regexp
}

type rule struct {
	Rule
	re *regexp.Regexp
}

// highEntropyID is the rule found by highEntropy rather than its
// expression: a scan of the runs of key characters is many times
// faster than the expression on every text.
const highEntropyID = "high-entropy-assignment"

// MarkerPrefix starts every marker Redact writes.
const MarkerPrefix = "[REDACTED:"

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

// Rules returns the rules d runs, in order.
func (d *Detector) Rules() []Rule {
	out := make([]Rule, len(d.rules))
	for i, r := range d.rules {
		out[i] = r.Rule
	}
	return out
}

// New returns a Detector with the built-in rules and cfg's.
func New(cfg Config) (*Detector, error) {
	d := &Detector{}
	all := make([]Rule, 0, len(builtin)+len(cfg.Rules))
	for _, r := range builtin {
		if !slices.Contains(cfg.Disable, r.ID) && !slices.ContainsFunc(cfg.Rules, func(c Rule) bool { return c.ID == r.ID }) {
			all = append(all, r)
		}
	}
	for _, id := range cfg.Disable {
		if !slices.ContainsFunc(builtin, func(r Rule) bool { return r.ID == id }) {
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
		d.rules = append(d.rules, &rule{Rule: r, re: re})
		if r.ID == highEntropyID && !slices.ContainsFunc(cfg.Rules, func(c Rule) bool { return c.ID == highEntropyID }) {
			d.highEntropy = d.rules[len(d.rules)-1]
		}
	}
	index := map[string]int{}
	var words []string
	for i, r := range d.rules {
		for _, k := range r.Keywords {
			j, ok := index[k]
			if !ok {
				j = len(words)
				index[k] = j
				words = append(words, k)
				d.byKeyword = append(d.byKeyword, nil)
			}
			d.byKeyword[j] = append(d.byKeyword[j], i)
		}
	}
	d.keywords = ahocorasick.NewTrieBuilder().AddStrings(words).Build()
	for _, a := range cfg.Allow {
		re, err := regexp.Compile(a)
		if err != nil {
			return nil, fmt.Errorf("secrets: allow %q: %w", a, err)
		}
		d.allow = append(d.allow, re)
	}
	return d, nil
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

// Find returns the secrets in text, in order, none overlapping another.
func (d *Detector) Find(text string) []Finding {
	if len(text) < 8 {
		return nil
	}
	var out []Finding
	if len(text) <= MaxText {
		out = d.find(text, 0, 0)
	} else {
		const overlap = 16 << 10
		for off := 0; off < len(text); off += MaxText - overlap {
			end := min(off+MaxText, len(text))
			out = append(out, d.find(text[off:end], off, 0)...)
			if end == len(text) {
				break
			}
		}
	}
	return settle(out)
}

// find returns the findings of every rule in text, whose offsets are
// moved by off; depth counts base64 decoding (one level only).
func (d *Detector) find(text string, off, depth int) []Finding {
	// Where each rule's keywords are, from one pass over the text in
	// lower case (ASCII only, so that offsets stay those of text).
	lower := make([]byte, len(text))
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	at := make([][]int, len(d.rules))
	d.keywords.Walk(lower, func(end, n, pattern int64) bool {
		for _, r := range d.byKeyword[pattern] {
			at[r] = append(at[r], int(end-n+1))
		}
		return true
	})
	var out []Finding
	for i, r := range d.rules {
		switch {
		case r == d.highEntropy:
		case len(r.Keywords) == 0:
			out = r.matches(text, 0, out)
		case len(at[i]) == 0:
		case r.Anchored:
			out = r.anchored(text, at[i], out)
		case r.Window == [2]int{}:
			out = r.matches(text, 0, out)
		default:
			for _, w := range windows(at[i], len(text), r.Window) {
				out = r.matches(text[w[0]:w[1]], w[0], out)
			}
		}
	}
	out = d.findRuns(text, depth, out)
	if len(d.allow) > 0 {
		out = slices.DeleteFunc(out, func(x Finding) bool { return d.allowed(text[x.Start:x.End]) })
	}
	for i := range out {
		out[i].Start += off
		out[i].End += off
	}
	return out
}

// matches appends r's matches in text, whose offsets are moved by off.
func (r *rule) matches(text string, off int, out []Finding) []Finding {
	for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
		s, e := m[0], m[1]
		if len(m) >= 4 && m[2] >= 0 {
			s, e = m[2], m[3]
		}
		if e-s < 1 || !r.accept(text[s:e]) {
			continue
		}
		out = append(out, Finding{RuleID: r.ID, Start: off + s, End: off + e})
	}
	return out
}

// anchored appends r's matches starting at each of its keywords, at.
func (r *rule) anchored(text string, at []int, out []Finding) []Finding {
	for _, p := range at {
		m := r.re.FindStringSubmatchIndex(text[p:min(p+r.Window[1], len(text))])
		if m == nil {
			continue
		}
		s, e := m[0], m[1]
		if len(m) >= 4 && m[2] >= 0 {
			s, e = m[2], m[3]
		}
		if e > s && r.accept(text[p+s:p+e]) {
			out = append(out, Finding{RuleID: r.ID, Start: p + s, End: p + e})
		}
	}
	return out
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

// findRuns appends what the runs of key characters (letters, digits,
// + / _ - =) of text hold: a quoted run of 24 to 258 of them right after
// = or :, which the built-in high-entropy-assignment rule accepts, and
// at depth 0, base64 that decodes to text holding a secret: the run is
// then a secret as a whole, found by that rule. One pass finds both.
func (d *Detector) findRuns(text string, depth int, out []Finding) []Finding {
	for i := 0; i < len(text); {
		if !b64[text[i]] {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && b64[text[j]] {
			j++
		}
		n := j - i
		// Base64 of text (a cursor, an encoded document) is no random
		// key: only what it decodes to can hold a secret.
		dec, text64 := "", false
		if n >= 24 {
			dec, text64 = decode64(text[i:j])
		}
		switch {
		case text64 && depth == 0 && n >= 32:
			if f := d.find(dec, 0, 1); len(f) > 0 {
				out = append(out, Finding{RuleID: f[0].RuleID, Start: i, End: j})
			}
		case text64:
		case d.highEntropy != nil && n <= 258 && quotedAssignment(text, i, j) && !typedID(text[i:j]) && d.highEntropy.accept(text[i:j]):
			out = append(out, Finding{RuleID: d.highEntropy.ID, Start: i, End: j})
		}
		i = j
	}
	return out
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

func (d *Detector) allowed(secret string) bool {
	for _, a := range d.allow {
		if a.MatchString(secret) {
			return true
		}
	}
	return false
}

func (r *rule) accept(v string) bool {
	if strings.HasPrefix(v, MarkerPrefix) || strings.Contains(strings.ToLower(v), "example") {
		// The documented example keys (AKIAIOSFODNN7EXAMPLE) are
		// everywhere in code and docs, and no secret.
		return false
	}
	if r.Placeholders && placeholder(v) {
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

var placeholderWords = []string{
	"example", "changeme", "change_me", "change-me", "placeholder", "redacted", "your_", "your-", "yourkey", "dummy",
	"xxxx", "****", "...", "…", "<", "${", "{{", "%(", "process.env", "os.environ", "getenv", "env[", "env.", "secrets.",
	"settings.", "config.", "localhost", "none", "null", "undefined", "true", "false", "password", "secret", "token",
}

// placeholder reports whether v reads as a placeholder or a reference
// to a secret kept elsewhere rather than a secret.
func placeholder(v string) bool {
	l := strings.ToLower(v)
	if hasAny(l, placeholderWords) {
		return true
	}
	// A run of one character (aaaaaaaa, 00000000).
	return strings.Count(l, l[:1]) == len(l)
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
func (d *Detector) Redact(text string) (string, int) {
	f := d.Find(text)
	if len(f) == 0 {
		return text, 0
	}
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, x := range f {
		b.WriteString(text[at:x.Start])
		b.WriteString(Marker(x.RuleID))
		at = x.End
	}
	b.WriteString(text[at:])
	return b.String(), len(f)
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
	}
	return "…"
}

// quotedAssignment reports whether text[i:j] is quoted (", ' or `,
// escaped or not) and preceded by = or : and spaces.
func quotedAssignment(text string, i, j int) bool {
	if i < 2 || j >= len(text) {
		return false
	}
	q := text[i-1]
	if q != '"' && q != '\'' && q != '`' || text[j] != q && !(text[j] == '\\' && j+1 < len(text) && text[j+1] == q) {
		return false
	}
	k := i - 2
	if text[k] == '\\' {
		k--
	}
	for k >= 0 && (text[k] == ' ' || text[k] == '\t') {
		k--
	}
	if k < 0 || text[k] != '=' && text[k] != ':' {
		return false
	}
	// An HTML attribute (content="…", integrity="…", nonce="…") holds
	// page tokens and hashes, not credentials.
	w := k
	for w > 0 && (text[w-1] >= 'a' && text[w-1] <= 'z' || text[w-1] == '-') {
		w--
	}
	return text[k] != '=' || !htmlAttrs[text[w:k]]
}

var htmlAttrs = map[string]bool{"content": true, "value": true, "integrity": true, "nonce": true, "href": true, "src": true,
	"id": true, "class": true, "name": true, "style": true, "d": true, "key": true, "data-id": true, "srcset": true, "action": true}

// typedID reports whether v is an object id of an API (msg_…, toolu_…,
// req_…, chatcmpl-…): a lower-case type, then _ or -, then the id.
// Keys with such prefixes have rules of their own.
func typedID(v string) bool {
	i := 0
	for i < len(v) && v[i] >= 'a' && v[i] <= 'z' {
		i++
	}
	return i >= 2 && i <= 10 && i < len(v) && (v[i] == '_' || v[i] == '-')
}

// Fingerprint names d's rules and allow-list: two Detectors with the
// same fingerprint find the same secrets, so a scan remembered under it
// holds for d.
func (d *Detector) Fingerprint() string {
	h := sha256.New()
	for _, r := range d.rules {
		fmt.Fprintf(h, "%s\x00%s\x00%q\x00%v\x00%v\x00", r.ID, r.Regex, r.Keywords, r.MinEntropy, r.Window)
	}
	for _, a := range d.allow {
		fmt.Fprintf(h, "allow\x00%s\x00", a)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
