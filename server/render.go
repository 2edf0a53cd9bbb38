package server

import (
	"embed"
	"html/template"
	"io"
	"io/fs"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/htmlview"
	"github.com/loomhq/loom/internal/human"
)

//go:embed assets
var assets embed.FS

// staticFS holds the dashboard's stylesheet and script.
var staticFS, _ = fs.Sub(assets, "assets/static")

// sessionCSS serves the stylesheet a session is drawn with, which
// htmlview shares with the html export, as /static/session.css.
func sessionCSS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeContent(w, r, "session.css", time.Time{}, strings.NewReader(htmlview.Stylesheet))
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
// layout and the templates a session is drawn with (htmlview), which the
// html export draws it with too.
type pages struct {
	byName map[string]*template.Template
}

func newPages() *pages {
	p := &pages{byName: map[string]*template.Template{}}
	base := htmlview.Templates().Funcs(template.FuncMap{"list": func(xs ...string) []string { return xs }, "sub": func(a, b int) int { return a - b },
		"usd": usd, "rate": func(v float64) string { return human.Count(int64(math.Round(v))) },
		"int64": func(n int) int64 { return int64(n) },
		"mins":  human.Minutes, "percent": human.Percent, "span": human.Span,
		// calWidth draws the insights' calendar twice as large as its
		// cells, the page's width at most (style.css).
		"calWidth": func(w int) int { return w * 2 },
		// meterWidth is a share's bar, as a percentage of the meter: a
		// share above nothing shows at least a sliver.
		"meterWidth": func(f float64) string {
			if f > 0 && f < 0.01 {
				f = 0.01
			}
			return strconv.FormatFloat(f*100, 'f', 1, 64)
		},
		"sessionTokens": func(u loom.Usage) int64 {
			return u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
		}})
	base = template.Must(base.ParseFS(assets, "assets/templates/layout.html"))
	for _, name := range []string{"login", "sessions", "session", "search", "usage", "insights", "blame", "team", "error"} {
		t := template.Must(template.Must(base.Clone()).ParseFS(assets, "assets/templates/"+name+".html"))
		p.byName[name] = t
	}
	p.byName["message"] = base
	// The share page stands alone: no navigation, no dashboard script.
	p.byName["share"] = template.Must(template.Must(base.Clone()).ParseFS(assets, "assets/templates/share.html"))
	return p
}

// usd writes a cost that may be unknown (nil): never $0 for one.
func usd(c *float64) string {
	if c == nil {
		return human.UnknownCost
	}
	return human.Cost(*c)
}

// render executes a page's layout into w.
func (p *pages) render(w io.Writer, name string, data any) error {
	t := p.byName[name]
	switch name {
	case "message":
		return t.ExecuteTemplate(w, "message", data)
	case "share":
		return t.ExecuteTemplate(w, "share-page", data)
	}
	return t.ExecuteTemplate(w, "layout", data)
}

// fragment executes one template defined by a page, without the layout:
// a piece of the page that the live view fetches to replace.
func (p *pages) fragment(w io.Writer, page, name string, data any) error {
	return p.byName[page].ExecuteTemplate(w, name, data)
}
