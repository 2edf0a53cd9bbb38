package secrets

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/loomhq/loom"
)

// Gate is a reader whose reads come out redacted: a loom.Reader and
// nothing else. Every way stored text leaves the machine — the MCP
// tools, loom recall and the agents' hooks, hand-off, shares, Markdown
// and HTML exports, embeddings — reads through one, so that secrets are
// replaced while the text is whole, before anything cuts, numbers,
// joins or highlights it: a search's snippets are made from the
// redacted text (loom.SearchQuery.Gate), a session's title and last
// prompt, cut short when they were stored, are read as cut.
//
// A gate has no writes and no service of the store below but those of
// loom.Reads, each read through it (Reads): a way out handed a gate can
// neither change the store nor read what the gate does not redact. An
// edge that must (loom blame's MCP tool reads the edit index, and
// redacts the file it makes whole) takes that one service from the code
// that opened the engine, not from the gate. TestGateIsAReaderOnly
// holds the gate's methods to loom.Reader's and its own helpers.
//
// The gate holds the reader below, it does not embed it: each method of
// loom.Reader is the gate's own, so a method added to loom.Reader does
// not compile until the gate says how it reads.
//
// A value the detector finds is replaced wherever else it appears too
// (Echoes): in every text of the same read (the messages read, a
// session's title with its messages, the hits of a search), before the
// place that gave it away as well as after, and in the texts of the
// gate's later reads. A gate lives for one MCP call or one command, and
// keeps at most GateEchoes literals from one read to the next.
//
// Redacted counts the secrets replaced so far, for a result to say how
// many it holds.
type Gate struct {
	// st is the reader below, and below its read services, which the
	// gate's (Reads) redact.
	st     loom.Reader
	below  loom.Reads
	d      *Detector
	n      atomic.Int64
	echoes *Echoes
}

// Gate returns st behind a gate of d, with the read services of st
// (loom.Reader.Reads) read through the gate. A nil st makes a gate that
// only redacts texts (Text, Lines).
func (d *Detector) Gate(st loom.Reader) *Gate {
	g := &Gate{st: st, d: d, echoes: d.Echoes(GateEchoes)}
	if st != nil {
		g.below = st.Reads()
	}
	return g
}

// Reads implements loom.Reader: each service of loom.Reads the store
// below has is read through the gate (TestGateDecidesEveryService holds
// each to it) — vectors' chunks and hits, activity, the index size —
// and nil where the store below has none.
func (g *Gate) Reads() loom.Reads {
	var r loom.Reads
	if g.below.Vectors != nil {
		r.Vectors = gateVectors{g}
	}
	if g.below.Activity != nil {
		r.Activity = gateActivity{g}
	}
	if g.below.IndexSize != nil {
		r.IndexSize = gateIndexSize{g}
	}
	return r
}

// Redacted returns how many secrets the gate replaced.
func (g *Gate) Redacted() int { return int(g.n.Load()) }

// Detector returns the gate's detector.
func (g *Gate) Detector() *Detector { return g.d }

// read is one read through the gate: each text is redacted by the
// detector as it comes (the values found kept in the gate's echoes),
// and what is to replace the echoes in it is queued (then); done
// replaces them in all the read's texts at once, so that a value found
// in the last text is replaced in the first.
type read struct {
	g    *Gate
	n    int64
	then []func(echoes []*echoBlock) int
}

func (g *Gate) read() *read { return &read{g: g} }

// text redacts *s.
func (r *read) text(s *string) { r.textCounted(s, true) }

// textCounted redacts *s, counting what it replaced when count is set
// (a copy of a text counted elsewhere is not).
func (r *read) textCounted(s *string, count bool) {
	var n int
	*s, n = r.g.d.redact(*s, r.g.echoes)
	if count {
		r.n += int64(n)
	}
	r.then = append(r.then, func(echoes []*echoBlock) int {
		var k int
		if *s, k = replaceEchoes(echoes, *s, ""); !count {
			k = 0
		}
		return k
	})
}

// session redacts the session *s holds, replacing it by a copy where it
// holds secrets. The last prompt is a copy of a message's text: its
// secrets are counted with the message's, not twice.
func (r *read) session(s **loom.Session) {
	if *s == nil {
		return
	}
	var n int
	*s, n = r.g.d.redactSession(*s, false, r.g.echoes)
	r.n += int64(n)
	r.then = append(r.then, func(echoes []*echoBlock) int {
		var k int
		*s, k = replaceSession(echoes, *s, false)
		return k
	})
}

// message redacts the message *m holds (its parts and its error),
// replacing it by a copy where it holds secrets.
func (r *read) message(m **loom.Message) {
	orig := *m
	if orig == nil {
		return
	}
	red, n := r.g.d.redactMessage(orig, r.g.echoes)
	if orig.Error != nil {
		if e, k := r.g.d.redact(orig.Error.Message, r.g.echoes); k > 0 {
			if red == orig {
				c := *orig
				red = &c
			}
			red.Error = &loom.MessageError{Message: e, Type: orig.Error.Type}
			n += k
		}
	}
	*m = red
	r.n += int64(n)
	r.then = append(r.then, func(echoes []*echoBlock) int {
		var k int
		*m, k = replaceMessage(echoes, *m)
		return k
	})
}

func (r *read) sessions(list []*loom.Session) {
	for i := range list {
		r.session(&list[i])
	}
}

func (r *read) messages(msgs []*loom.Message) {
	for i := range msgs {
		r.message(&msgs[i])
	}
}

// done replaces the echoes of every value found so far in the read's
// texts, counts what the read replaced, and lets the gate forget its
// oldest values past its bound.
func (r *read) done() {
	if echoes := r.g.echoes.snapshot(); len(echoes) > 0 {
		for _, f := range r.then {
			r.n += int64(f(echoes))
		}
	}
	r.g.n.Add(r.n)
	r.g.echoes.Trim()
}

// Text redacts one text that leaves through the gate: what a way out
// reads from elsewhere than the store (a memory file, an error).
func (g *Gate) Text(s string) string {
	r := g.read()
	r.text(&s)
	r.done()
	return s
}

// Lines redacts the lines of one text as the text they make, before
// anything is cut into lines: a secret that spans lines (a private
// key's body) is found whole, its marker is put on the line where it
// starts, and the other lines it covers keep only what is not of it.
// The result has as many lines as lines, so a line keeps its number.
func (g *Gate) Lines(lines []string) []string {
	if len(lines) == 0 {
		return lines
	}
	text := strings.Join(lines, "\n")
	r := g.read()
	f := g.d.Find(text)
	g.echoes.add(text, f)
	if len(f) > 0 {
		text = markedLines(text, f)
		r.n += int64(len(f))
	}
	r.then = append(r.then, func(echoes []*echoBlock) int {
		e := findEchoes(echoes, text)
		if len(e) > 0 {
			text = markedLines(text, e)
		}
		return len(e)
	})
	r.done()
	return strings.Split(text, "\n")
}

// markedLines is marked keeping the line breaks a finding covers, each
// after its marker, so that the text keeps its lines.
func markedLines(text string, f []Finding) string {
	var b strings.Builder
	b.Grow(len(text) + 24*len(f))
	at := 0
	for _, x := range f {
		b.WriteString(text[at:x.Start])
		b.WriteString(Marker(x.RuleID))
		b.WriteString(strings.Repeat("\n", strings.Count(text[x.Start:x.End], "\n")))
		at = x.End
	}
	b.WriteString(text[at:])
	return b.String()
}

func (g *Gate) session(s *loom.Session) *loom.Session {
	r := g.read()
	r.session(&s)
	r.done()
	return s
}

func (g *Gate) sessions(list []*loom.Session) []*loom.Session {
	r := g.read()
	r.sessions(list)
	r.done()
	return list
}

func (g *Gate) messages(msgs []*loom.Message) []*loom.Message {
	r := g.read()
	r.messages(msgs)
	r.done()
	return msgs
}

// err redacts the message of a coded error (an ambiguous reference
// lists the titles of its candidates) and the candidates themselves.
func (g *Gate) err(err error) error {
	var e *loom.Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	c := *e
	r := g.read()
	r.text(&c.Message)
	if len(e.Candidates) > 0 {
		c.Candidates = append([]*loom.Session(nil), e.Candidates...)
		r.sessions(c.Candidates)
	}
	r.done()
	return redactedError{coded: &c, chain: err}
}

// redactedError is a coded error whose message the gate redacted: it
// reads as the redacted copy, which errors.As finds first, and is still
// what the rest of the original chain says (loom.ErrSearchTime of a
// search that ran out of time, a context's end).
type redactedError struct {
	coded *loom.Error
	chain error
}

func (e redactedError) Error() string { return e.coded.Error() }

func (e redactedError) Unwrap() []error { return []error{e.coded, e.chain} }

// Messages implements loom.Reader.
func (g *Gate) Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	msgs, err := g.st.Messages(ctx, sessionID, q)
	return g.messages(msgs), g.err(err)
}

// Context implements loom.Reader.
func (g *Gate) Context(ctx context.Context, sessionID string) ([]*loom.Message, error) {
	msgs, err := g.st.Context(ctx, sessionID)
	return g.messages(msgs), g.err(err)
}

// Session implements loom.Reader.
func (g *Gate) Session(ctx context.Context, id string) (*loom.Session, error) {
	s, err := g.st.Session(ctx, id)
	return g.session(s), g.err(err)
}

// ReadSessions implements loom.Reader: the sessions and their messages
// are one read.
func (g *Gate) ReadSessions(ctx context.Context, ids []string, q loom.MessageQuery) ([]*loom.SessionData, error) {
	data, err := g.st.ReadSessions(ctx, ids, q)
	r := g.read()
	for _, sd := range data {
		r.session(&sd.Session)
		r.messages(sd.Messages)
	}
	r.done()
	return data, g.err(err)
}

// Resolve implements loom.Reader.
func (g *Gate) Resolve(ctx context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	s, err := g.st.Resolve(ctx, ref, scope)
	return g.session(s), g.err(err)
}

// Sessions implements loom.Reader.
func (g *Gate) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	list, err := g.st.Sessions(ctx, f)
	return g.sessions(list), g.err(err)
}

// Summaries implements loom.Reader.
func (g *Gate) Summaries(ctx context.Context, f loom.SessionFilter) ([]*loom.SessionSummary, error) {
	list, err := g.st.Summaries(ctx, f)
	r := g.read()
	for i, s := range list {
		// A copy each: the store's summaries are not changed. The last
		// prompt is counted with its message, as a session's.
		c := *s
		list[i] = &c
		r.text(&c.Title)
		r.text(&c.Description)
		r.textCounted(&c.LastPrompt, false)
	}
	r.done()
	return list, g.err(err)
}

// Family implements loom.Reader.
func (g *Gate) Family(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error) {
	list, err := g.st.Family(ctx, q)
	return g.sessions(list), g.err(err)
}

// gateMark stands, inside the gate, before each marker it writes in a
// snippet's text, so that the markers a result holds can be counted
// (the text may hold markers of an earlier redaction) and the mark
// removed after. It is a character of no word: a snippet's words are
// found around it as they would be around the marker alone.
const gateMark = "\uE000"

// snippetGate redacts the texts the snippets of a search are made from,
// as one read: each by the detector, then the echoes of the values
// found in any of them in all; the markers it writes are flagged with
// gateMark.
func (g *Gate) snippetGate(texts []string, cut []bool) {
	for i, text := range texts {
		texts[i] = g.snippetText(text, cut[i])
	}
	if blocks := g.echoes.snapshot(); len(blocks) > 0 {
		for i := range texts {
			texts[i], _ = replaceEchoes(blocks, texts[i], gateMark)
		}
	}
}

// snippetText redacts one text a snippet is made from, cut short at its
// end when cut, its new markers flagged with gateMark.
func (g *Gate) snippetText(text string, cut bool) string {
	if cut && !strings.HasSuffix(text, Cut) {
		text += Cut
	} else {
		cut = false
	}
	if f := g.d.Find(text); len(f) > 0 {
		g.echoes.add(text, f)
		text = marked(text, f, gateMark)
	}
	if cut {
		text = strings.TrimSuffix(text, Cut)
	}
	return text
}

// hits counts and unflags the markers of hits' snippets and redacts
// what they show of their sessions; a value found in a title alone is
// replaced in the snippets too.
func (g *Gate) hits(hits []loom.SearchHit) []loom.SearchHit {
	r := g.read()
	for i := range hits {
		h := &hits[i]
		if k := strings.Count(h.Snippet, gateMark); k > 0 {
			r.n += int64(k)
			h.Snippet = strings.ReplaceAll(h.Snippet, gateMark, "")
		}
		r.text(&h.SessionTitle)
		r.then = append(r.then, func(echoes []*echoBlock) int {
			var k int
			h.Snippet, k = replaceEchoes(echoes, h.Snippet, "")
			return k
		})
	}
	r.done()
	return hits
}

// Search implements loom.Reader: the snippets are made from the
// redacted texts.
func (g *Gate) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	q.Gate = g.snippetGate
	hits, err := g.st.Search(ctx, q)
	return g.hits(hits), g.err(err)
}

// Usage implements loom.Reader: the names of sessions are their titles.
func (g *Gate) Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
	rep, err := g.st.Usage(ctx, f)
	if rep != nil {
		r := g.read()
		for i := range rep.BySession {
			r.text(&rep.BySession[i].Name)
		}
		r.done()
	}
	return rep, g.err(err)
}

// UsageSlices implements loom.Reader: figures by quarter hour, agent,
// project and model, no stored text.
func (g *Gate) UsageSlices(ctx context.Context, f loom.UsageSliceFilter) ([]loom.UsageSlice, error) {
	return g.st.UsageSlices(ctx, f)
}

// gateIndexSize is the index size of the store below, read through the
// gate: a figure, handed on.
type gateIndexSize struct{ g *Gate }

// IndexSize implements loom.IndexSizer.
func (x gateIndexSize) IndexSize(ctx context.Context) (int64, error) {
	return x.g.below.IndexSize.IndexSize(ctx)
}

// gateActivity is the activity of the store below, read through the
// gate: a tool's name is text an agent chose, and leaves redacted.
type gateActivity struct{ g *Gate }

// Activity implements loom.ActivityReader.
func (x gateActivity) Activity(ctx context.Context, f loom.ActivityFilter) (*loom.Activity, error) {
	g := x.g
	a, err := g.below.Activity.Activity(ctx, f)
	if a != nil {
		r := g.read()
		for i := range a.Tools {
			r.text(&a.Tools[i].Name)
		}
		r.done()
	}
	return a, g.err(err)
}

// gateVectors is the vectors of the store below, read through the gate:
// the texts it returns (chunks, hits) come out redacted.
type gateVectors struct{ g *Gate }

// Unembedded implements loom.VectorReader: what is embedded is sent to
// an embeddings endpoint, so the chunks come out redacted, read as cut
// when the store cut them.
func (x gateVectors) Unembedded(ctx context.Context, n, maxChars int) ([]loom.Chunk, int64, error) {
	g := x.g
	chunks, upTo, err := g.below.Vectors.Unembedded(ctx, n, maxChars)
	r := g.read()
	for i := range chunks {
		c := &chunks[i]
		var k int
		c.Text, k = g.d.redactCut(c.Text, utf8.RuneCountInString(c.Text) >= maxChars, g.echoes)
		r.n += int64(k)
		r.then = append(r.then, func(echoes []*echoBlock) int {
			var k int
			c.Text, k = replaceEchoes(echoes, c.Text, "")
			return k
		})
	}
	r.done()
	return chunks, upTo, err
}

// Vectors implements loom.VectorReader: vectors, no stored text.
func (x gateVectors) Vectors(ctx context.Context, fn func(loom.Vector) error) (string, error) {
	return x.g.below.Vectors.Vectors(ctx, fn)
}

// VectorStatus implements loom.VectorReader: counts, no stored text.
func (x gateVectors) VectorStatus(ctx context.Context) (loom.VectorStatus, error) {
	return x.g.below.Vectors.VectorStatus(ctx)
}

// VectorHits implements loom.VectorReader: the hits' snippets are made
// from the redacted texts.
func (x gateVectors) VectorHits(ctx context.Context, q loom.SearchQuery, ids []int64, scores []float64) ([]loom.SearchHit, error) {
	g := x.g
	q.Gate = g.snippetGate
	hits, err := g.below.Vectors.VectorHits(ctx, q, ids, scores)
	return g.hits(hits), g.err(err)
}

var (
	_ loom.Reader         = (*Gate)(nil)
	_ loom.VectorReader   = gateVectors{}
	_ loom.IndexSizer     = gateIndexSize{}
	_ loom.ActivityReader = gateActivity{}
)
