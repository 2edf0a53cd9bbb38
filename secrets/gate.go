package secrets

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/loomhq/loom"
)

// Gate is a store whose reads come out redacted. Every way stored text
// leaves the machine — the MCP tools, loom recall and the agents' hooks,
// hand-off, shares, Markdown and HTML exports, embeddings — reads
// through one, so that secrets are replaced while the text is whole,
// before anything cuts, numbers, joins or highlights it: a search's
// snippets are made from the redacted text (loom.SearchQuery.Gate), a
// session's title and last prompt, cut short when they were stored, are
// read as cut. Writes go to the store below unchanged.
//
// Redacted counts the secrets replaced so far, for a result to say how
// many it holds.
type Gate struct {
	loom.Store
	d *Detector
	n atomic.Int64
}

// Gate returns st behind a gate of d.
func (d *Detector) Gate(st loom.Store) *Gate {
	if g, ok := st.(*Gate); ok {
		st = g.Store
	}
	return &Gate{Store: st, d: d}
}

// Unwrap returns the store below.
func (g *Gate) Unwrap() loom.Store { return g.Store }

// Redacted returns how many secrets the gate replaced.
func (g *Gate) Redacted() int { return int(g.n.Load()) }

// Detector returns the gate's detector.
func (g *Gate) Detector() *Detector { return g.d }

// Text redacts one text that leaves through the gate: what a way out
// reads from elsewhere than the store (a memory file, an error).
func (g *Gate) Text(s string) string {
	r, n := g.d.Redact(s)
	g.n.Add(int64(n))
	return r
}

func (g *Gate) session(s *loom.Session) *loom.Session {
	if s == nil {
		return nil
	}
	// The last prompt is a copy of a message's text: its secrets are
	// counted with the message's, not twice.
	r, n := g.d.redactSession(s, false)
	g.n.Add(int64(n))
	return r
}

func (g *Gate) sessions(list []*loom.Session) []*loom.Session {
	for i := range list {
		list[i] = g.session(list[i])
	}
	return list
}

func (g *Gate) messages(msgs []*loom.Message) []*loom.Message {
	for i, m := range msgs {
		r, n := g.d.RedactMessage(m)
		if m.Error != nil {
			if e, k := g.d.Redact(m.Error.Message); k > 0 {
				if r == m {
					c := *m
					r = &c
				}
				r.Error = &loom.MessageError{Message: e, Type: m.Error.Type}
				n += k
			}
		}
		msgs[i] = r
		g.n.Add(int64(n))
	}
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
	c.Message = g.Text(e.Message)
	if len(e.Candidates) > 0 {
		c.Candidates = g.sessions(append([]*loom.Session(nil), e.Candidates...))
	}
	return &c
}

// Messages implements loom.Store.
func (g *Gate) Messages(ctx context.Context, sessionID string, q loom.MessageQuery) ([]*loom.Message, error) {
	msgs, err := g.Store.Messages(ctx, sessionID, q)
	return g.messages(msgs), g.err(err)
}

// Context implements loom.Store.
func (g *Gate) Context(ctx context.Context, sessionID string) ([]*loom.Message, error) {
	msgs, err := g.Store.Context(ctx, sessionID)
	return g.messages(msgs), g.err(err)
}

// Session implements loom.Store.
func (g *Gate) Session(ctx context.Context, id string) (*loom.Session, error) {
	s, err := g.Store.Session(ctx, id)
	return g.session(s), g.err(err)
}

// ReadSessions implements loom.Store.
func (g *Gate) ReadSessions(ctx context.Context, ids []string, q loom.MessageQuery) ([]*loom.SessionData, error) {
	data, err := g.Store.ReadSessions(ctx, ids, q)
	for _, sd := range data {
		sd.Session = g.session(sd.Session)
		sd.Messages = g.messages(sd.Messages)
	}
	return data, g.err(err)
}

// Resolve implements loom.Store.
func (g *Gate) Resolve(ctx context.Context, ref string, scope loom.ResolveScope) (*loom.Session, error) {
	s, err := g.Store.Resolve(ctx, ref, scope)
	return g.session(s), g.err(err)
}

// Sessions implements loom.Store.
func (g *Gate) Sessions(ctx context.Context, f loom.SessionFilter) ([]*loom.Session, error) {
	list, err := g.Store.Sessions(ctx, f)
	return g.sessions(list), g.err(err)
}

// Summaries implements loom.Store.
func (g *Gate) Summaries(ctx context.Context, f loom.SessionFilter) ([]*loom.SessionSummary, error) {
	list, err := g.Store.Summaries(ctx, f)
	for i, s := range list {
		c := *s
		var a, b, e int
		c.Title, a = g.d.Redact(s.Title)
		c.LastPrompt, b = g.d.Redact(s.LastPrompt)
		c.Description, e = g.d.Redact(s.Description)
		if a+b+e > 0 {
			list[i] = &c
			g.n.Add(int64(a + e))
		}
	}
	return list, g.err(err)
}

// Family implements loom.Store.
func (g *Gate) Family(ctx context.Context, q loom.FamilyQuery) ([]*loom.Session, error) {
	list, err := g.Store.Family(ctx, q)
	return g.sessions(list), g.err(err)
}

// UpdateSession implements loom.Store.
func (g *Gate) UpdateSession(ctx context.Context, id string, u loom.SessionUpdate) (*loom.Session, error) {
	s, err := g.Store.UpdateSession(ctx, id, u)
	return g.session(s), g.err(err)
}

// Fork implements loom.Store.
func (g *Gate) Fork(ctx context.Context, id string, opts loom.ForkOptions) (*loom.Session, error) {
	s, err := g.Store.Fork(ctx, id, opts)
	return g.session(s), g.err(err)
}

// Rewind implements loom.Store.
func (g *Gate) Rewind(ctx context.Context, id string, opts loom.RewindOptions) (*loom.Session, error) {
	s, err := g.Store.Rewind(ctx, id, opts)
	return g.session(s), g.err(err)
}

// Delete implements loom.Store.
func (g *Gate) Delete(ctx context.Context, id string, opts loom.DeleteOptions) ([]*loom.Session, error) {
	list, err := g.Store.Delete(ctx, id, opts)
	return g.sessions(list), g.err(err)
}

// gateMark stands, inside the gate, before each marker it writes in a
// snippet's text, so that the markers a result holds can be counted
// (the text may hold markers of an earlier redaction) and the mark
// removed after. It is a character of no word: a snippet's words are
// found around it as they would be around the marker alone.
const gateMark = "\uE000"

// snippetGate redacts a text a snippet is made from, its new markers
// flagged with gateMark.
func (g *Gate) snippetGate(text string, cut bool) string {
	if cut && !strings.HasSuffix(text, Cut) {
		text += Cut
	} else {
		cut = false
	}
	f := g.d.Find(text)
	if len(f) > 0 {
		var b strings.Builder
		b.Grow(len(text) + 32*len(f))
		at := 0
		for _, x := range f {
			b.WriteString(text[at:x.Start])
			b.WriteString(gateMark + Marker(x.RuleID))
			at = x.End
		}
		b.WriteString(text[at:])
		text = b.String()
	}
	if cut {
		text = strings.TrimSuffix(text, Cut)
	}
	return text
}

// hits counts and unflags the markers of hits' snippets and redacts
// what they show of their sessions.
func (g *Gate) hits(hits []loom.SearchHit) []loom.SearchHit {
	for i := range hits {
		h := &hits[i]
		if k := strings.Count(h.Snippet, gateMark); k > 0 {
			g.n.Add(int64(k))
			h.Snippet = strings.ReplaceAll(h.Snippet, gateMark, "")
		}
		var n int
		h.SessionTitle, n = g.d.Redact(h.SessionTitle)
		g.n.Add(int64(n))
	}
	return hits
}

// Search implements loom.Store: the snippets are made from the
// redacted texts.
func (g *Gate) Search(ctx context.Context, q loom.SearchQuery) ([]loom.SearchHit, error) {
	q.Gate = g.snippetGate
	hits, err := g.Store.Search(ctx, q)
	return g.hits(hits), g.err(err)
}

// Usage implements loom.Store: the names of sessions are their titles.
func (g *Gate) Usage(ctx context.Context, f loom.UsageFilter) (*loom.UsageReport, error) {
	r, err := g.Store.Usage(ctx, f)
	if r != nil {
		for i := range r.BySession {
			var n int
			r.BySession[i].Name, n = g.d.Redact(r.BySession[i].Name)
			g.n.Add(int64(n))
		}
	}
	return r, g.err(err)
}

// IndexSize implements loom.IndexSizer for a store below that does.
func (g *Gate) IndexSize(ctx context.Context) (int64, error) {
	s, ok := g.Store.(loom.IndexSizer)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	return s.IndexSize(ctx)
}

// Activity implements loom.ActivityReader for a store below that does;
// a tool's name is text an agent chose, and leaves redacted.
func (g *Gate) Activity(ctx context.Context, f loom.ActivityFilter) (*loom.Activity, error) {
	ar, ok := g.Store.(loom.ActivityReader)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	a, err := ar.Activity(ctx, f)
	if a != nil {
		for i := range a.Tools {
			a.Tools[i].Name = g.Text(a.Tools[i].Name)
		}
	}
	return a, g.err(err)
}

// vectors is the store below as a loom.VectorStore.
func (g *Gate) vectors() (loom.VectorStore, error) {
	vs, ok := g.Store.(loom.VectorStore)
	if !ok {
		return nil, loom.Errorf(loom.EINVALID, "this store keeps no vectors")
	}
	return vs, nil
}

// UseVectorModel implements loom.VectorStore.
func (g *Gate) UseVectorModel(ctx context.Context, model string) error {
	vs, err := g.vectors()
	if err != nil {
		return err
	}
	return vs.UseVectorModel(ctx, model)
}

// ClaimVectors implements loom.VectorStore.
func (g *Gate) ClaimVectors(ctx context.Context) (func(), bool, error) {
	vs, err := g.vectors()
	if err != nil {
		return nil, false, err
	}
	return vs.ClaimVectors(ctx)
}

// Unembedded implements loom.VectorStore: what is embedded is sent to an
// embeddings endpoint, so the chunks come out redacted, read as cut
// when the store cut them.
func (g *Gate) Unembedded(ctx context.Context, n, maxChars int) ([]loom.Chunk, int64, error) {
	vs, err := g.vectors()
	if err != nil {
		return nil, 0, err
	}
	chunks, upTo, err := vs.Unembedded(ctx, n, maxChars)
	for i := range chunks {
		var k int
		chunks[i].Text, k = g.d.RedactCut(chunks[i].Text, utf8.RuneCountInString(chunks[i].Text) >= maxChars)
		g.n.Add(int64(k))
	}
	return chunks, upTo, err
}

// PutVectors implements loom.VectorStore.
func (g *Gate) PutVectors(ctx context.Context, model string, upTo int64, vecs []loom.Vector) error {
	vs, err := g.vectors()
	if err != nil {
		return err
	}
	return vs.PutVectors(ctx, model, upTo, vecs)
}

// Vectors implements loom.VectorStore.
func (g *Gate) Vectors(ctx context.Context, fn func(loom.Vector) error) (string, error) {
	vs, err := g.vectors()
	if err != nil {
		return "", err
	}
	return vs.Vectors(ctx, fn)
}

// VectorStatus implements loom.VectorStore.
func (g *Gate) VectorStatus(ctx context.Context) (loom.VectorStatus, error) {
	vs, err := g.vectors()
	if err != nil {
		return loom.VectorStatus{}, err
	}
	return vs.VectorStatus(ctx)
}

// VectorHits implements loom.VectorStore: the hits' snippets are made
// from the redacted texts.
func (g *Gate) VectorHits(ctx context.Context, q loom.SearchQuery, ids []int64, scores []float64) ([]loom.SearchHit, error) {
	vs, err := g.vectors()
	if err != nil {
		return nil, err
	}
	q.Gate = g.snippetGate
	hits, err := vs.VectorHits(ctx, q, ids, scores)
	return g.hits(hits), g.err(err)
}

var (
	_ loom.Store          = (*Gate)(nil)
	_ loom.VectorStore    = (*Gate)(nil)
	_ loom.IndexSizer     = (*Gate)(nil)
	_ loom.ActivityReader = (*Gate)(nil)
)
