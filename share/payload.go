// Package share is loom share's side of share links: what a shared
// session holds (Payload, built from a session by Build after redaction,
// with paths and usernames found for the preview and hidden on request),
// how it is sealed for a hub that must not read it (Seal, Open), and the
// client of the hub's share endpoints (Client). The page that opens a
// link is the server's (/share/{id}); it decrypts in the browser with
// the key from the link's fragment. See docs/security.md, "Sharing".
package share

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/htmlview"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/secrets"
)

// Version is the version of Payload's shape, which the share page reads.
const Version = 1

// Payload is what a share link shows: a session's title and messages,
// as text ready to draw. It holds no ids, keys, project roots or
// metadata of the session beyond what the page shows.
type Payload struct {
	V         int       `json:"v"`
	Title     string    `json:"title"`
	Surface   string    `json:"surface,omitempty"`
	Model     string    `json:"model,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Turns is the range shared ("3-5"), empty for the whole session.
	Turns    string    `json:"turns,omitempty"`
	Messages []Message `json:"messages"`
}

// Message is one shared message.
type Message struct {
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	Model     string    `json:"model,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	Error     string    `json:"error,omitempty"`
	Parts     []Part    `json:"parts"`
}

// Part is one shared part, its JSON already turned into text as the
// dashboard shows it.
type Part struct {
	Type   string `json:"type"`
	Text   string `json:"text,omitempty"`
	Name   string `json:"name,omitempty"`
	Status string `json:"status,omitempty"`
	Title  string `json:"title,omitempty"`
	// InputLine is what a tool call was given on one line, as the
	// dashboard shows it above its result (htmlview.ToolInput).
	InputLine string `json:"input_line,omitempty"`
	Input     string `json:"input,omitempty"`
	Output    string `json:"output,omitempty"`
	Error     string `json:"error,omitempty"`
	Filename  string `json:"filename,omitempty"`
	Mime      string `json:"mime,omitempty"`
	Path      string `json:"path,omitempty"`
	URL       string `json:"url,omitempty"`
	// Omitted says why content was left out (a file's inline bytes).
	Omitted string `json:"omitted,omitempty"`
}

// Options say what Build shares of a session.
type Options struct {
	// From and To are the turns shared, both included; zero for the
	// first and the last.
	From, To int
	// Exclude are the seqs of messages left out.
	Exclude map[int64]bool
	// Redact, when set, replaces secrets with markers naming their rule.
	Redact *secrets.Detector
	// Hider finds the paths and usernames the preview lists, and
	// replaces them when HidePaths (nil: paths only, no usernames).
	Hider *Hider
	// HidePaths replaces home directories, the project root and
	// usernames (Hider) in every text shared.
	HidePaths bool
}

// Preview is what the terminal shows before a share is published.
type Preview struct {
	Messages   int `json:"messages"`
	Excluded   int `json:"excluded"`
	Redactions int `json:"redactions"`
	// Paths and Users are the absolute paths and usernames found in
	// what is shared (after hiding, when HidePaths).
	Paths []string `json:"paths"`
	Users []string `json:"users"`
	// Hidden is how many paths and usernames HidePaths replaced.
	Hidden int `json:"hidden"`
}

// Build makes the payload of a share of s with its messages msgs, and
// the preview of it.
func Build(s *loom.Session, msgs []*loom.Message, opts Options) (*Payload, *Preview, error) {
	if opts.From > 0 && opts.To > 0 && opts.From > opts.To {
		return nil, nil, loom.Errorf(loom.EINVALID, "turn range %d-%d is backwards", opts.From, opts.To)
	}
	p := &Payload{V: Version, Title: s.Title, Surface: s.Surface, Model: s.Model, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	if p.Title == "" {
		p.Title = "Untitled session"
	}
	if opts.From > 0 || opts.To > 0 {
		p.Turns = turnsLabel(opts.From, opts.To)
	}
	pv := &Preview{}
	var kept []*loom.Message
	for _, m := range msgs {
		switch {
		case opts.From > 0 && m.Turn < opts.From, opts.To > 0 && m.Turn > opts.To:
			continue
		case opts.Exclude[m.Seq]:
			pv.Excluded++
			continue
		}
		kept = append(kept, m)
	}
	if len(kept) == 0 {
		return nil, nil, loom.Errorf(loom.EINVALID, "nothing to share: no message of the session is in the turns asked for, or all are excluded")
	}
	if opts.Redact != nil {
		// The title and the messages are one read: a secret found in
		// one is replaced where the other repeats it.
		pv.Redactions = opts.Redact.RedactMessages(kept, &p.Title)
	}
	for _, m := range kept {
		p.Messages = append(p.Messages, message(m))
	}
	h := opts.Hider
	if h == nil {
		h = &Hider{}
	}
	if opts.HidePaths {
		pv.Hidden = p.each(h.Hide)
	}
	found := newFinds()
	p.each(func(s string) (string, int) { found.scan(s, h); return s, 0 })
	pv.Paths, pv.Users = found.paths.sorted(), found.users.sorted()
	pv.Messages = len(p.Messages)
	return p, pv, nil
}

// each replaces every text of p by f's answer, and returns the sum of
// f's counts.
func (p *Payload) each(f func(string) (string, int)) int {
	total := 0
	do := func(s *string) {
		var n int
		*s, n = f(*s)
		total += n
	}
	do(&p.Title)
	for i := range p.Messages {
		m := &p.Messages[i]
		do(&m.Error)
		for j := range m.Parts {
			pt := &m.Parts[j]
			for _, s := range []*string{&pt.Text, &pt.Title, &pt.InputLine, &pt.Input, &pt.Output, &pt.Error, &pt.Filename, &pt.Path, &pt.URL} {
				do(s)
			}
		}
	}
	return total
}

func message(m *loom.Message) Message {
	out := Message{Seq: m.Seq, Role: m.Role, Model: m.Model, CreatedAt: m.CreatedAt, Parts: []Part{}}
	if m.Error != nil {
		out.Error = m.Error.Message
	}
	for _, p := range m.Parts {
		if sp, ok := part(p); ok {
			out.Parts = append(out.Parts, sp)
		}
	}
	return out
}

// part turns a stored part into what the page draws; step markers are
// left out, as the dashboard leaves them.
func part(p loom.Part) (Part, bool) {
	out := Part{Type: p.Type}
	switch p.Type {
	case loom.PartText, loom.PartReasoning:
		out.Text = p.Text
	case loom.PartTool:
		out.Name, out.Status, out.Title, out.Error = p.Name, p.Status, p.Title, p.Error
		out.Input, out.Output = human.PrettyJSON(p.Input), outputText(p.Output)
		out.InputLine = htmlview.ToolInput(p)
	case loom.PartAgent:
		out.Name = p.Name
	case loom.PartFile:
		out.Filename, out.Mime = p.Filename, p.Mime
		if p.Source != nil {
			out.Path = p.Source.Path
		}
		switch {
		case strings.HasPrefix(p.URL, "data:"):
			out.Omitted = fmt.Sprintf("inline content (%d bytes) not shared", len(p.URL))
		case strings.HasPrefix(p.URL, "http://"), strings.HasPrefix(p.URL, "https://"):
			out.URL = p.URL
		}
	default:
		return out, false
	}
	return out, true
}

// outputText is a tool's output as the dashboard shows it.
func outputText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return human.OutputText(raw)
}

func turnsLabel(from, to int) string {
	switch {
	case from == to:
		return strconv.Itoa(from)
	case to == 0:
		return strconv.Itoa(from) + "-"
	case from == 0:
		return "1-" + strconv.Itoa(to)
	}
	return strconv.Itoa(from) + "-" + strconv.Itoa(to)
}

// ParseTurns reads --turns: "N", "A-B", "A-" (to the last) or "-B"
// (from the first).
func ParseTurns(s string) (from, to int, err error) {
	bad := loom.Errorf(loom.EINVALID, "--turns %q: want N, A-B, A- or -B with turn numbers from 1", s)
	a, b, isRange := strings.Cut(strings.TrimSpace(s), "-")
	num := func(v string) (int, bool) {
		if v == "" {
			return 0, isRange
		}
		n, err := strconv.Atoi(v)
		return n, err == nil && n >= 1
	}
	from, okA := num(a)
	to, okB := num(b)
	if !isRange {
		to, okB = from, true
	}
	if !okA || !okB || (from == 0 && to == 0) {
		return 0, 0, bad
	}
	if from > 0 && to > 0 && from > to {
		return 0, 0, loom.Errorf(loom.EINVALID, "--turns %q is backwards: the first turn comes first", s)
	}
	return from, to, nil
}

// ParseSeqs reads --exclude values: message numbers ("7"), ranges
// ("3-5") and lists of them ("3,7-9").
func ParseSeqs(values []string) (map[int64]bool, error) {
	out := map[int64]bool{}
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			item = strings.TrimPrefix(strings.TrimSpace(item), "#")
			a, b, isRange := strings.Cut(item, "-")
			x, errA := strconv.ParseInt(a, 10, 64)
			y := x
			var errB error
			if isRange {
				y, errB = strconv.ParseInt(b, 10, 64)
			}
			if errA != nil || errB != nil || x < 1 || y < x || y-x > 1_000_000 {
				return nil, loom.Errorf(loom.EINVALID, "--exclude %q: want message numbers (as #N in session show), such as 7, 3-5 or 3,7-9", v)
			}
			for s := x; s <= y; s++ {
				out[s] = true
			}
		}
	}
	return out, nil
}
