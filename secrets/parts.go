package secrets

import (
	"encoding/json"
	"strings"

	"github.com/loomhq/loom"
)

// Place is where a secret is in a session: the message, the index of
// the part in it and the field of the part, the rule that found it and
// a hint of it (Hint). It never holds the secret.
type Place struct {
	MessageID string `json:"message_id"`
	Seq       int64  `json:"seq"`
	Part      int    `json:"part"`
	Field     string `json:"field"`
	RuleID    string `json:"rule"`
	Hint      string `json:"hint"`
	// ID names the value without showing it: `loom secrets allow ID`
	// keeps it from being reported again.
	ID string `json:"id"`
	// Echo is set where the value is repeated out of the sight of any
	// rule, found where one saw it (Echoes).
	Echo bool `json:"echo,omitempty"`
}

// field is one piece of text of a part, by name, with where it is.
type field struct {
	name string
	text *string
	raw  *json.RawMessage
}

// fields are the texts of p that can hold a secret.
func fields(p *loom.Part) []field {
	f := []field{
		{name: "text", text: &p.Text},
		{name: "input", raw: &p.Input},
		{name: "output", raw: &p.Output},
		{name: "error", text: &p.Error},
		{name: "title", text: &p.Title},
		{name: "metadata", raw: &p.Metadata},
		{name: "url", text: &p.URL},
	}
	if p.Source != nil {
		f = append(f, field{name: "source", text: &p.Source.Text})
	}
	return f
}

func (f field) value() string {
	if f.text != nil {
		return *f.text
	}
	return string(*f.raw)
}

// echoed reports whether tool part p printed one variable whose name
// says secret (printenv API_TOKEN, echo $DB_PASSWORD): its output, the
// value alone, is then that secret, though nothing beside it says so.
func (d *Detector) echoed(p *loom.Part) bool {
	if p.Type != loom.PartTool || len(p.Input) == 0 || len(p.Output) == 0 || !d.matcherOn("echoed-variable") {
		return false
	}
	var in struct {
		Command string `json:"command"`
		Cmd     string `json:"cmd"`
	}
	if json.Unmarshal(p.Input, &in) != nil {
		return false
	}
	if _, ok := echoedName(in.Command + in.Cmd + "\n"); !ok {
		return false
	}
	out := loom.JSONText(p.Output)
	return echoedValue(out) && !d.allowedValue(strings.TrimSpace(out))
}

// ScanMessage returns the places of the secrets in m.
func (d *Detector) ScanMessage(m *loom.Message) []Place {
	var out []Place
	for i := range m.Parts {
		p := &m.Parts[i]
		if d.echoed(p) {
			v := strings.TrimSpace(loom.JSONText(p.Output))
			out = append(out, Place{MessageID: m.ID, Seq: m.Seq, Part: i, Field: "output", RuleID: "echoed-variable", Hint: Hint(v), ID: ValueID(v)})
		}
		for _, f := range fields(p) {
			v := f.value()
			for _, x := range d.Find(v) {
				out = append(out, Place{MessageID: m.ID, Seq: m.Seq, Part: i, Field: f.name, RuleID: x.RuleID, Hint: Hint(x.hinted(v)), ID: x.ID})
			}
		}
	}
	return out
}

// RedactPart returns p with its secrets replaced by markers, and how
// many it replaced. p itself is not changed. JSON fields (a tool's
// input, output and metadata) stay valid JSON.
func (d *Detector) RedactPart(p loom.Part) (loom.Part, int) { return d.redactPart(p, nil) }

// redactPart is RedactPart, keeping in found (when not nil) the values
// it replaced.
func (d *Detector) redactPart(p loom.Part, found *Echoes) (loom.Part, int) {
	n := 0
	if p.Source != nil {
		src := *p.Source
		p.Source = &src
	}
	if d.echoed(&p) {
		out := loom.JSONText(p.Output)
		v := strings.TrimSpace(out)
		found.addValue(v, "echoed-variable", v)
		b, _ := json.Marshal(Marker("echoed-variable") + out[len(strings.TrimRight(out, " \t\r\n")):])
		p.Output = b
		n++
	}
	redact := func(s string) (string, int) { return d.redact(s, found) }
	for _, f := range fields(&p) {
		if f.text != nil {
			var k int
			*f.text, k = redact(*f.text)
			n += k
			continue
		}
		if len(*f.raw) == 0 {
			continue
		}
		red, k := redact(string(*f.raw))
		if k == 0 {
			continue
		}
		if !json.Valid([]byte(red)) {
			// A secret that spans an escape: redact the decoded
			// strings and encode the value again.
			red, k = redactJSON(*f.raw, redact)
		}
		*f.raw = json.RawMessage(red)
		n += k
	}
	return p, n
}

// redactJSON redacts the strings of JSON value raw, decoded, with
// redact, and encodes it again.
func redactJSON(raw json.RawMessage, redact func(string) (string, int)) (string, int) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		// Not JSON (a store holds only valid JSON here): redact it
		// as a JSON string, which it then is.
		s, n := redact(string(raw))
		b, _ := json.Marshal(s)
		return string(b), n
	}
	n := 0
	var walk func(any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case string:
			s, k := redact(t)
			n += k
			return s
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
		case map[string]any:
			for k, x := range t {
				t[k] = walk(x)
			}
		}
		return v
	}
	v = walk(v)
	b, err := json.Marshal(v)
	if err != nil {
		return `"` + Marker("unreadable") + `"`, n + 1
	}
	return string(b), n
}

// RedactMessage returns m with the secrets of its parts replaced by
// markers (a copy, when there were any; m itself otherwise), and how
// many it replaced.
func (d *Detector) RedactMessage(m *loom.Message) (*loom.Message, int) {
	return d.redactMessage(m, nil)
}

// redactMessage is RedactMessage, keeping in found (when not nil) the
// values it replaced.
func (d *Detector) redactMessage(m *loom.Message, found *Echoes) (*loom.Message, int) {
	var parts []loom.Part
	n := 0
	for i, p := range m.Parts {
		red, k := d.redactPart(p, found)
		if k == 0 {
			continue
		}
		if parts == nil {
			parts = append([]loom.Part(nil), m.Parts...)
		}
		parts[i] = red
		n += k
	}
	if n == 0 {
		return m, 0
	}
	c := *m
	c.Parts = parts
	return &c, n
}

// RedactMessages replaces, in msgs, each message holding secrets by a
// redacted copy (RedactMessage), and texts (a title shown with them) by
// their redacted form, as one read: a value found in one of them is
// replaced wherever else it appears in them too (Echoes). It returns
// how many secrets it replaced. The messages themselves are not
// changed.
func (d *Detector) RedactMessages(msgs []*loom.Message, texts ...*string) int {
	found := d.Echoes(0)
	n := 0
	for i, m := range msgs {
		var k int
		msgs[i], k = d.redactMessage(m, found)
		n += k
	}
	for _, t := range texts {
		var k int
		*t, k = d.redact(*t, found)
		n += k
	}
	if found.Len() == 0 {
		return n
	}
	blocks := found.snapshot()
	for i, m := range msgs {
		var k int
		msgs[i], k = replaceMessage(blocks, m)
		n += k
	}
	for _, t := range texts {
		var k int
		*t, k = replaceEchoes(blocks, *t, "")
		n += k
	}
	return n
}

// RedactSession returns the session's metadata with its secrets
// replaced (a copy, when there were any) and how many it replaced:
// the title, description and last prompt that listings show. The last
// prompt is a copy of a message's text, whose secrets are counted with
// the message's, so a listing counts them once: here only when the
// messages are not redacted along (count).
func (d *Detector) RedactSession(s *loom.Session) (*loom.Session, int) {
	return d.redactSession(s, true, nil)
}

// redactSession is RedactSession, counting the last prompt's secrets
// with countPrompt only, and keeping in found (when not nil) the values
// it replaced.
func (d *Detector) redactSession(s *loom.Session, countPrompt bool, found *Echoes) (*loom.Session, int) {
	if s == nil {
		return s, 0
	}
	c := *s
	var a, b, e int
	c.Title, a = d.redact(s.Title, found)
	c.Description, b = d.redact(s.Description, found)
	c.LastPrompt, e = d.redact(s.LastPrompt, found)
	if a+b+e == 0 {
		return s, 0
	}
	if !countPrompt {
		e = 0
	}
	return &c, a + b + e
}

// RedactSessions redacts sessions for output: each session's metadata
// and messages are replaced, in data, by redacted copies where they hold
// secrets; what they pointed to is not changed. Each session is one
// read: a value found in it is replaced wherever else it appears in it
// (Echoes). It returns how many secrets it replaced. Exports, hand-off
// and shares go through it.
func (d *Detector) RedactSessions(data []*loom.SessionData) int {
	n := 0
	for _, sd := range data {
		found := d.Echoes(0)
		var k int
		sd.Session, k = d.redactSession(sd.Session, false, found)
		n += k
		for i, m := range sd.Messages {
			sd.Messages[i], k = d.redactMessage(m, found)
			n += k
		}
		if found.Len() == 0 {
			continue
		}
		blocks := found.snapshot()
		sd.Session, k = replaceSession(blocks, sd.Session, false)
		n += k
		for i, m := range sd.Messages {
			sd.Messages[i], k = replaceMessage(blocks, m)
			n += k
		}
	}
	return n
}
