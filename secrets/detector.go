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
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

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
	// rules, then of matchers after them) that have it. The automaton
	// is built when the first text is read: a recall that finds
	// nothing never needs it.
	keywords  func() *automaton
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
	// re is the rule's expression: a built-in one with keywords is
	// compiled the first time a text holds one of them, so that a
	// Detector costs its automaton alone until then (compiling every
	// built-in rule took 6 ms of each process that redacts).
	re func() *regexp.Regexp
	// bounded: the expression starts at a word boundary, which an
	// anchored run checks by hand.
	bounded bool
}

// detectorVersion changes whenever the built-in matchers find
// differently, so that scans remembered under an older one start over.
const detectorVersion = 11

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
	builtins := len(all)
	all = append(all, cfg.Rules...)
	for i, r := range all {
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
		re, err := compileRule(expr, i < builtins && len(r.Keywords) > 0)
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
	d.keywords, d.byKeyword = sync.OnceValue(kw.build), kw.of
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

// compileRule returns a rule's expression; lazy, the expression is
// compiled on first use, as built-in rules' are (their expressions
// compile: the tests compile every one), and a user's rule is compiled
// at once so that its error is New's.
func compileRule(expr string, lazy bool) (func() *regexp.Regexp, error) {
	if lazy {
		return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) }), nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	return func() *regexp.Regexp { return re }, nil
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
func (p *patterns) build() *automaton {
	return newAutomaton(p.words)
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

// matcherOn reports whether the built-in matcher id runs.
func (d *Detector) matcherOn(id string) bool {
	return slices.ContainsFunc(d.matchers, func(m matcher) bool { return m.id == id })
}
