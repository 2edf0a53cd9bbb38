package server

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
)

//go:embed assets
var assets embed.FS

// staticFS holds the dashboard's stylesheet and script.
var staticFS, _ = fs.Sub(assets, "assets/static")

// markdown renders message text. Raw HTML in the text is dropped and
// dangerous link targets (javascript: …) are removed: goldmark does both
// unless told it may not.
var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// renderMarkdown turns Markdown into safe HTML.
func renderMarkdown(text string) template.HTML {
	var b bytes.Buffer
	if err := markdown.Convert([]byte(text), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(text) + "</pre>")
	}
	return template.HTML(b.String())
}

// Snippet markers: characters of Unicode's private use area, which no
// text of a session is expected to hold, so that marking survives
// HTML escaping and becomes <mark> afterwards.
const (
	markStart = "\uE000"
	markEnd   = "\uE001"
)

// highlight escapes a snippet and turns its markers into <mark>.
func highlight(snippet string) template.HTML {
	s := template.HTMLEscapeString(snippet)
	s = strings.ReplaceAll(s, markStart, "<mark>")
	s = strings.ReplaceAll(s, markEnd, "</mark>")
	// A snippet cut inside a match leaves a mark open.
	if n := strings.Count(s, "<mark>") - strings.Count(s, "</mark>"); n > 0 {
		s += strings.Repeat("</mark>", n)
	}
	return template.HTML(s)
}

// pages holds the dashboard's templates, one per page, each with the
// layout and the partials.
type pages struct {
	byName map[string]*template.Template
}

var funcs = template.FuncMap{
	"time":      fmtTime,
	"short":     shortID,
	"name":      sessionName,
	"num":       fmtNum,
	"cost":      fmtCost,
	"markdown":  renderMarkdown,
	"pretty":    human.PrettyJSON,
	"output":    human.OutputText,
	"duration":  partDuration,
	"statusCls": statusClass,
	"truncate":  truncate,
	"seqAnchor": func(seq int64) string { return fmt.Sprintf("m-%d", seq) },
	"list":      func(xs ...string) []string { return xs },
}

func newPages() *pages {
	p := &pages{byName: map[string]*template.Template{}}
	base := template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/templates/layout.html", "assets/templates/partials.html"))
	for _, name := range []string{"login", "sessions", "session", "search", "error"} {
		t := template.Must(template.Must(base.Clone()).ParseFS(assets, "assets/templates/"+name+".html"))
		p.byName[name] = t
	}
	p.byName["message"] = base
	return p
}

// render executes a page's layout into w.
func (p *pages) render(w io.Writer, name string, data any) error {
	t := p.byName[name]
	if name == "message" {
		return t.ExecuteTemplate(w, "message", data)
	}
	return t.ExecuteTemplate(w, "layout", data)
}

// fragment executes one template defined by a page, without the layout:
// a piece of the page that the live view fetches to replace.
func (p *pages) fragment(w io.Writer, page, name string, data any) error {
	return p.byName[page].ExecuteTemplate(w, name, data)
}

func fmtTime(t time.Time) template.HTML {
	if t.IsZero() {
		return ""
	}
	u := t.UTC()
	return template.HTML(fmt.Sprintf(`<time datetime="%s">%s</time>`, loom.FormatTime(u), u.Format("2006-01-02 15:04 UTC")))
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// sessionName is what a session is called on screen: its title, else its
// last prompt, else its key, else its short id.
func sessionName(s *loom.Session) string {
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
	return shortID(s.ID)
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func fmtNum(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

func fmtCost(c float64) string {
	switch {
	case c == 0:
		return "$0"
	case c < 0.01:
		return fmt.Sprintf("$%.4f", c)
	}
	return fmt.Sprintf("$%.2f", c)
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
