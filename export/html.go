package export

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sync"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/htmlview"
	"github.com/loomhq/loom/internal/human"
)

//go:embed html.html
var htmlPage string

// htmlTemplates is the page with the templates the dashboard draws a
// session with, parsed on first use rather than when any loom command
// starts. It is never executed itself: each write executes a clone, with
// links that stay inside the file.
var htmlTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(htmlview.Templates().Parse(htmlPage))
})

// htmlDocument is what the page shows.
type htmlDocument struct {
	Title    string
	CSS      template.CSS
	Contents []*htmlview.Tree
	Sessions []*htmlSession
	Count    string
	// Total is the usage of all the sessions together, when there are
	// several.
	Total string
}

// htmlSession is one session of the page, with the fields the
// "session-head" template reads.
type htmlSession struct {
	S        *loom.Session
	Parent   *loom.Session
	Messages []*loom.Message
	Anchor   string
}

// writeHTML writes sessions as one page that needs nothing else to be
// read: the stylesheet inline, no script, nothing to load (a
// Content-Security-Policy tells the browser so), each session as the
// dashboard's session page draws it, its sub-agent sessions after it.
// Links between the sessions of the file lead to them in the page.
func writeHTML(w io.Writer, data []*loom.SessionData) error {
	doc := &htmlDocument{CSS: template.CSS(htmlview.Stylesheet)}
	byID := make(map[string]*htmlSession, len(data))
	nmsg := 0
	var total loom.Usage
	for _, d := range data {
		hs := &htmlSession{S: withoutLock(d.Session), Messages: d.Messages, Anchor: "session-" + d.Session.ID}
		doc.Sessions = append(doc.Sessions, hs)
		byID[hs.S.ID] = hs
		nmsg += len(d.Messages)
		total.Add(d.Session.Usage)
	}
	nodes := make(map[string]*htmlview.Tree, len(data))
	for _, hs := range doc.Sessions {
		n := &htmlview.Tree{S: hs.S}
		nodes[hs.S.ID] = n
		if p := byID[hs.S.ParentID]; p != nil && p != hs {
			hs.Parent = p.S
		}
		if p := nodes[hs.S.ParentID]; p != nil && p != n {
			p.Children = append(p.Children, n)
		} else {
			doc.Contents = append(doc.Contents, n)
		}
	}
	switch {
	case len(doc.Contents) == 1:
		doc.Title = htmlview.SessionName(doc.Contents[0].S)
	default:
		doc.Title = human.Plural(len(doc.Contents), "session")
	}
	if len(data) < 2 {
		doc.Contents = nil
	} else if !total.IsZero() {
		doc.Total = human.Usage(total)
	}
	doc.Count = human.Plural(len(data), "session") + ", " + human.Plural(nmsg, "message")

	first := ""
	if len(data) > 0 {
		first = data[0].Session.ID
	}
	t, err := htmlTemplates().Clone()
	if err != nil {
		return fmt.Errorf("html export: %w", err)
	}
	t.Funcs(template.FuncMap{
		"sessionHref": func(id string) string {
			if hs := byID[id]; hs != nil {
				return "#" + hs.Anchor
			}
			return ""
		},
		// The first session's messages keep the dashboard's anchors
		// (#m-SEQ); the others' are told apart by their session.
		"msgAnchor": func(m *loom.Message) string {
			if m.SessionID == first || m.SessionID == "" {
				return fmt.Sprintf("m-%d", m.Seq)
			}
			return fmt.Sprintf("%s-m-%d", m.SessionID, m.Seq)
		},
	})
	bw := bufio.NewWriter(w)
	if err := t.ExecuteTemplate(bw, "document", doc); err != nil {
		return fmt.Errorf("html export: %w", err)
	}
	return bw.Flush()
}
