// Package htmlview draws loom sessions as HTML: message Markdown made
// safe, and the templates and stylesheet of a session that the dashboard
// (package server) and the html export (package export) share, so that a
// session reads the same in both. It imports neither.
package htmlview

import (
	"embed"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
)

//go:embed session.html
var files embed.FS

// Stylesheet is how a session looks: colours (light and dark), messages
// and their parts, badges, the usage panel and the lineage tree. The
// dashboard serves it; the html export inlines it.
//
//go:embed session.css
var Stylesheet string

// Funcs are the functions the templates call. Two say where links lead,
// and a page that is not the dashboard replaces them (template.Funcs on
// its clone): "sessionHref", a session id's address ("" draws no link),
// and "msgAnchor", a message's element id.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"time":        fmtTime,
		"short":       ShortID,
		"name":        SessionName,
		"num":         human.Count,
		"cost":        human.UsageCost,
		"tokens":      human.HasTokens,
		"markdown":    Markdown,
		"pretty":      human.PrettyJSON,
		"output":      human.OutputText,
		"duration":    partDuration,
		"statusCls":   statusClass,
		"truncate":    truncate,
		"steps":       steps,
		"treeName":    treeName,
		"kindLabel":   kindLabel,
		"toolInput":   ToolInput,
		"toolPeek":    ToolPeek,
		"sessionHref": func(id string) string { return "/s/" + id },
		"msgAnchor":   func(m *loom.Message) string { return fmt.Sprintf("m-%d", m.Seq) },
	}
}

// Templates returns the templates a session is drawn with, parsed anew
// so that the caller may add its own and replace Funcs:
//
//   - "session-head": the title, badges, source, description and parent
//     link of .S (a *loom.Session), with .Parent (nil when unknown);
//   - "usage": the usage panel of a *loom.Session;
//   - "message": a *loom.Message with its parts ("part");
//   - "tree": a *Tree, as nested list items.
func Templates() *template.Template {
	return template.Must(template.New("").Funcs(Funcs()).ParseFS(files, "session.html"))
}

// Tree is a session in a lineage tree.
type Tree struct {
	S        *loom.Session
	Current  bool
	Children []*Tree
}

// SessionName is what a session is called on screen: its title, else its
// last prompt, else its key, else its short id.
func SessionName(s *loom.Session) string {
	switch {
	case s == nil:
		return ""
	case s.Title != "":
		return s.Title
	case s.LastPrompt != "":
		return truncate(s.LastPrompt, 80)
	case s.Key != "":
		return s.Key
	}
	return ShortID(s.ID)
}

// ShortID is the first eight characters of an id, as pages show it.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func fmtTime(t time.Time) template.HTML {
	if t.IsZero() {
		return ""
	}
	u := t.UTC()
	return template.HTML(fmt.Sprintf(`<time datetime="%s">%s</time>`, loom.FormatTime(u), u.Format("2006-01-02 15:04 UTC")))
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ToolInput is what a tool call was given, on one line, as a terminal
// shows it: "$ go test ./..." for a shell command, the path of a read
// or an edit, the pattern or query of a search, else the input's compact
// JSON; cut to InputRunes. "" when there is none, or when the call's
// title says the same.
func ToolInput(p loom.Part) string {
	in := human.InputLine(p.Input)
	if in == "" || in == strings.TrimSpace(p.Title) {
		return ""
	}
	return truncate(in, InputRunes)
}

// Peek is the start of a tool call's result, shown under the call
// without a click; the whole result is one click away.
type Peek struct {
	// Text is the first PeekLines lines of the result that are not
	// blank at its ends, each cut to PeekRunes.
	Text string
	// More is how many lines it leaves out.
	More int
	// Err says it is the call's error, the call having no output.
	Err bool
}

// How much of a tool call a page shows inline: its input on one line
// of up to InputRunes, and up to PeekLines lines of its result, each cut
// to PeekRunes. The share page (server/assets/static/share.js) cuts
// results the same way.
const (
	InputRunes = 300
	PeekLines  = 4
	PeekRunes  = 200
)

// ToolPeek is the start of p's result: its output, or its error when it
// has none; nil for neither.
func ToolPeek(p loom.Part) *Peek {
	text, isErr := "", false
	if len(p.Output) > 0 && string(p.Output) != "null" {
		text = human.OutputText(p.Output)
	}
	if strings.TrimSpace(text) == "" && p.Error != "" {
		text, isErr = p.Error, true
	}
	text = strings.Trim(text, "\n")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	shown := lines[:min(len(lines), PeekLines)]
	for i, l := range shown {
		l = strings.TrimRight(l, " \t\r")
		if r := []rune(l); len(r) > PeekRunes {
			l = string(r[:PeekRunes-1]) + "…"
		}
		shown[i] = l
	}
	return &Peek{Text: strings.Join(shown, "\n"), More: len(lines) - len(shown), Err: isErr}
}

func partDuration(p loom.Part) string {
	if p.StartedAt == nil || p.EndedAt == nil {
		return ""
	}
	d := p.EndedAt.Sub(*p.StartedAt)
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func statusClass(status string) string {
	switch status {
	case loom.ToolCompleted:
		return "ok"
	case loom.ToolError:
		return "err"
	}
	return "run"
}

// steps counts a message's step-finish parts: the model calls it took.
func steps(m *loom.Message) int {
	n := 0
	for _, p := range m.Parts {
		if p.Type == loom.PartStepFinish {
			n++
		}
	}
	return n
}

// treeName is a session's name in a lineage tree: a fork with loom's
// default title ("T (fork 2)") is named T, as its badge (kindLabel) says
// the rest, so the line says fork once.
func treeName(s *loom.Session) string {
	if s.Kind == loom.KindFork {
		if base, mark := loom.SplitForkTitle(s.Title); mark != "" && base != "" {
			return base
		}
	}
	return SessionName(s)
}

// kindLabel is what a session's kind badge says: "sub-agent", or for a
// fork the suffix of its default title ("fork 2", "rewound"), else "fork".
func kindLabel(s *loom.Session) string {
	switch s.Kind {
	case loom.KindSubagent:
		return "sub-agent"
	case loom.KindFork:
		if _, mark := loom.SplitForkTitle(s.Title); mark != "" {
			return mark
		}
	}
	return s.Kind
}
