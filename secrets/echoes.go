package secrets

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/loomhq/loom"
)

// Echoes of a secret: a value the detector found where a rule sees it (a
// prompt's "Authorization: Bearer f8XdQA1s…") is often written again
// where none can ("I used f8XdQA1s… for the call", a later command, a
// title). Echoes keeps the values found, each with the rule that found
// it, and replaces them as literals wherever else they appear, with the
// same marker. Only values long and random enough that their literal is
// that secret and nothing else are kept (echoable): never a word, a name
// of code, a placeholder or a value the allow-list names.
//
// Redacting is then two passes over the texts of one read: the detector
// over each (the values found added), then the literal pass over all of
// them, so that a value is replaced where it appears before the place
// that gave it away as well as after.

// MinEcho is the shortest value, in bytes, replaced where it is
// repeated: with the randomness echoable asks for, twelve characters of
// a key are no word, name or number that text holds by chance, while a
// shorter password (hunter2, a PIN) may well be.
const MinEcho = 12

// Bounds on what Echoes holds. The automaton of the literal pass costs
// 2 KB a state and a literal adds up to echoKey states, so literals are
// held in blocks of blockSize, each with its automaton, built once (the
// last block again when it grew); Trim drops the oldest blocks past a
// set's cap.
const (
	// maxEchoLen: a longer value (a private key block) is found by its
	// rule wherever it is whole.
	maxEchoLen = 4096
	// echoKey is how many bytes of each literal's end the automaton
	// holds; a match of them is checked against the whole literal. The
	// end, not the start: keys share their starts (sk-proj-, ghp_,
	// eyJhbGciOiJIUzI1NiIs), and random ends tell them apart.
	echoKey   = 6
	blockSize = 256
	// GateEchoes is how many literals a gate keeps from one read to the
	// next (a value is one literal, or two or three where JSON escapes
	// some of its characters): about 12 MB of automata at most.
	GateEchoes = 1024
)

// Echoes is a set of secret values to replace wherever they appear. It
// is safe for concurrent use.
type Echoes struct {
	d   *Detector
	max int
	// also are sets whose values are replaced too (read only).
	also []*Echoes

	mu     sync.Mutex
	of     map[string]echoOf // by literal
	lits   []string          // in the order added
	blocks []*echoBlock      // blocks[i] holds lits[i*blockSize:]; nil until built
}

// echoOf is what a literal is the echo of: the value (as read, escapes
// decoded) and the rule that found it.
type echoOf struct{ value, rule string }

type echoBlock struct {
	lits []string
	of   []echoOf
	trie *automaton
	// byKey lists, by pattern of trie, the literals that end with it,
	// longest first.
	byKey [][]int
}

func buildBlock(lits []string, of []echoOf) *echoBlock {
	var keys patterns
	for i, l := range lits {
		keys.add(l[len(l)-echoKey:], i)
	}
	for _, ls := range keys.of {
		slices.SortFunc(ls, func(x, y int) int { return len(lits[y]) - len(lits[x]) })
	}
	return &echoBlock{lits: lits, of: of, trie: keys.build(), byKey: keys.of}
}

// Echoes returns an empty set for d's findings that keeps at most max
// literals (0: no bound) past Trim, and replaces also's values too.
func (d *Detector) Echoes(max int, also ...*Echoes) *Echoes {
	return &Echoes{d: d, max: max, also: slices.DeleteFunc(slices.Clone(also), func(e *Echoes) bool { return e == nil }), of: map[string]echoOf{}}
}

// Len returns how many literals e holds (not also's).
func (e *Echoes) Len() int {
	if e == nil {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.lits)
}

// Values returns the values e holds (not also's), as read, each once,
// oldest first.
func (e *Echoes) Values() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, l := range e.lits {
		if v := e.of[l].value; !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// echoable reports whether v, a value the detector found, is kept: long
// enough and random enough to be no word, and named by no allow-list.
func (d *Detector) echoable(v string) bool {
	if len(v) < MinEcho || len(v) > maxEchoLen || strings.ContainsAny(v, " \t\r\n") {
		// With blanks: a passphrase or a block, which its rule finds
		// where it is whole; the literal pass is for tokens.
		return false
	}
	l := strings.ToLower(v)
	if !accepted(v) || wordValues[l] || placeholder(v) || placeholderWord(v) || reference(v) {
		return false
	}
	if identifierLike(v) || dottedIdentifier(v) || looksLikePath(v) || versionLike(v) {
		return false
	}
	var lower, upper, digit, other bool
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	kinds := 0
	for _, k := range []bool{lower, upper, digit, other} {
		if k {
			kinds++
		}
	}
	return kinds >= 2 && random(v, 0.75) && !d.allowedValue(v)
}

// add keeps the values of findings f of text (whose offsets they are).
func (e *Echoes) add(text string, f []Finding) {
	if e == nil {
		return
	}
	for _, x := range f {
		if x.value != "" {
			e.addValue(x.value, x.RuleID, text[x.Start:x.End])
		}
	}
}

// addValue keeps value v, found by rule, with the forms it takes in
// stored text: as read, as written where it was read through escapes
// (raw), and as a JSON string holds it.
func (e *Echoes) addValue(v, rule, raw string) {
	if e == nil || !e.d.echoable(v) {
		return
	}
	forms := []string{v}
	if raw != v && !strings.ContainsAny(raw, "\r\n") {
		forms = append(forms, raw)
	}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(v) == nil {
			if s := strings.TrimSuffix(b.String(), "\n"); len(s) >= 2 {
				forms = append(forms, s[1:len(s)-1])
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.of[v]; ok {
		return
	}
	for _, lit := range forms {
		e.addLiteral(lit, echoOf{value: v, rule: rule})
	}
}

// addLiteral keeps lit, an echo of of; e.mu is held.
func (e *Echoes) addLiteral(lit string, of echoOf) {
	if _, ok := e.of[lit]; ok || len(lit) < echoKey {
		return
	}
	e.of[lit] = of
	e.lits = append(e.lits, lit)
	if b := (len(e.lits) - 1) / blockSize; b < len(e.blocks) {
		e.blocks[b] = nil
	}
}

// Merge adds the values from holds to e.
func (e *Echoes) Merge(from *Echoes) {
	if from == nil || from == e {
		return
	}
	from.mu.Lock()
	lits := slices.Clone(from.lits)
	of := make([]echoOf, len(lits))
	for i, l := range lits {
		of[i] = from.of[l]
	}
	from.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, l := range lits {
		e.addLiteral(l, of[i])
	}
}

// Trim drops the oldest values past e's cap, a block at a time: what a
// gate keeps from one read to the next. Within a read nothing is
// dropped, so that every value found in it is replaced in all of it.
func (e *Echoes) Trim() {
	if e == nil || e.max <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	drop := 0
	for len(e.lits)-drop*blockSize > e.max && (drop+1)*blockSize <= len(e.lits) {
		drop++
	}
	if drop == 0 {
		return
	}
	for _, lit := range e.lits[:drop*blockSize] {
		delete(e.of, lit)
	}
	e.lits = slices.Clone(e.lits[drop*blockSize:])
	if drop < len(e.blocks) {
		e.blocks = slices.Clone(e.blocks[drop:])
	} else {
		e.blocks = nil
	}
}

// snapshot returns the automata of e's values, and of also's, built
// where they are not yet.
func (e *Echoes) snapshot() []*echoBlock {
	if e == nil {
		return nil
	}
	var out []*echoBlock
	for _, a := range e.also {
		out = append(out, a.snapshot()...)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	n := (len(e.lits) + blockSize - 1) / blockSize
	for len(e.blocks) < n {
		e.blocks = append(e.blocks, nil)
	}
	for i := range n {
		if e.blocks[i] == nil {
			lits := slices.Clone(e.lits[i*blockSize : min(len(e.lits), (i+1)*blockSize)])
			of := make([]echoOf, len(lits))
			for k, l := range lits {
				of[k] = e.of[l]
			}
			e.blocks[i] = buildBlock(lits, of)
		}
		out = append(out, e.blocks[i])
	}
	return out
}

// findEchoes returns where text holds the literals of blocks, in order,
// none overlapping another; each finding's value is the value its
// literal is an echo of.
func findEchoes(blocks []*echoBlock, text string) []Finding {
	if len(blocks) == 0 || len(text) < MinEcho {
		return nil
	}
	var f []Finding
	// Walk reads bytes: text's own, not a copy of them (it writes
	// none).
	in := unsafe.Slice(unsafe.StringData(text), len(text))
	for _, b := range blocks {
		b.trie.Walk(in, func(end, _, pattern int64) bool {
			e := int(end) + 1
			for _, i := range b.byKey[pattern] {
				if l := b.lits[i]; e >= len(l) && text[e-len(l):e] == l {
					f = append(f, Finding{RuleID: b.of[i].rule, Start: e - len(l), End: e, value: b.of[i].value})
					break
				}
			}
			return true
		})
	}
	return settle(f)
}

// replaceEchoes replaces in text the literals of blocks, each by mark
// and its rule's marker.
func replaceEchoes(blocks []*echoBlock, text, mark string) (string, int) {
	f := findEchoes(blocks, text)
	if len(f) == 0 {
		return text, 0
	}
	return marked(text, f, mark), len(f)
}

// Find returns where text holds the values of e (and also's), in
// order, none overlapping another: the rule that found each value, and
// its ID.
func (e *Echoes) Find(text string) []Finding {
	f := findEchoes(e.snapshot(), text)
	for i := range f {
		f[i].ID = ValueID(f[i].value)
	}
	return f
}

// ScanMessage returns the places where m holds the values of e (and
// also's), each marked Echo.
func (e *Echoes) ScanMessage(m *loom.Message) []Place {
	blocks := e.snapshot()
	if len(blocks) == 0 {
		return nil
	}
	var out []Place
	for i := range m.Parts {
		for _, f := range fields(&m.Parts[i]) {
			for _, x := range findEchoes(blocks, f.value()) {
				out = append(out, Place{MessageID: m.ID, Seq: m.Seq, Part: i, Field: f.name, RuleID: x.RuleID, Hint: Hint(x.value), ID: ValueID(x.value), Echo: true})
			}
		}
	}
	return out
}

// Redactor redacts as the detector does, keeping the values it finds,
// and then replaces every value of its set: what `loom secrets redact`
// rewrites the copies of the text it redacted with (the sync log, the
// replay logs, the chat history), so that they hold no more than the
// store. It is a synclog.Redactor.
type Redactor struct{ e *Echoes }

// Redactor returns the Redactor of e's values.
func (e *Echoes) Redactor() *Redactor { return &Redactor{e: e} }

// Redact implements synclog.Redactor.
func (r *Redactor) Redact(text string) (string, int) {
	t, n := r.e.Redact(text)
	t, k := r.e.Replace(t)
	return t, n + k
}

// RedactPart implements synclog.Redactor.
func (r *Redactor) RedactPart(p loom.Part) (loom.Part, int) {
	p, n := r.e.RedactPart(p)
	p, k := r.e.ReplacePart(p)
	return p, n + k
}

// RedactMessage implements synclog.Redactor.
func (r *Redactor) RedactMessage(m *loom.Message) (*loom.Message, int) {
	m, n := r.e.d.redactMessage(m, r.e)
	m, k := r.e.ReplaceMessage(m)
	return m, n + k
}

// RedactSession implements synclog.Redactor.
func (r *Redactor) RedactSession(s *loom.Session) (*loom.Session, int) {
	s, n := r.e.d.redactSession(s, true, r.e)
	s, k := r.e.ReplaceSession(s, true)
	return s, n + k
}
