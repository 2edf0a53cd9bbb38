// Package geminiapps reads the Gemini Apps activity of a Google
// Takeout export (gemini.google.com's prompts and replies) for loom's
// importer.
//
// Google keeps no file of Gemini Apps on the user's machine; its
// Takeout exports them as My Activity, an HTML page
// (Takeout/My Activity/Gemini Apps/MyActivity.html) of one cell
// (div.outer-cell) a record: a header cell naming the product ("Gemini
// Apps") and a content cell. A prompt's record is labelled "Prompted"
// and timed ("Jan 2, 2025, 3:04:05 PM EST"); its content is the prompt
// and, after it, the reply as HTML. Two layouts are known: the label,
// the prompt and the time as lines of the content cell, the reply's
// paragraphs after the time (Takeout's own, as public readers of it
// show); and the label and the time as paragraphs of the header cell,
// the content cell's first block the prompt and the rest the reply
// (agentsview's reader's). Other records (Canvas, feedback, other
// products' cells in an export of all activity) are counted as
// skipped. The export is in the account's language: only the English
// one is read, and a page of another gives one line.
//
// What becomes what: each Prompted record is a session of its own (the
// export keeps no conversation's thread): the prompt a user message,
// the reply an assistant message, both at the record's time. Its id is
// made of its time (and its place among those of the same second), so
// that a later export, which holds the same records and newer ones at
// its top, imports only the newer ones.
//
// Learnt from agentsview's reader of it (kenn-io/agentsview at
// 538600744d1b87614d3746d36a0966c1f2ac1cad,
// internal/parser/gemini_apps_takeout.go and its tests' pages in
// gemini_apps_takeout_test.go) and the Takeout layout a public reader
// of Gemini's My Activity keeps an example of
// (jetpack3331/ai-chat-history-manager at
// 717e1379af22ae23c12f4d2e4fb65b4fdcd920ef, examples/gemini.html,
// parsers/gemini_parser.py); no export was at hand. The pages in
// testdata are built to those layouts (testdata/README.md).
package geminiapps

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// Format reads Takeout's Gemini Apps activity. The zero value is ready
// to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Gemini Apps' name in loom.
const Tool = "gemini-apps"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is Google's, which serves Gemini.
func (Format) Provider() string { return "google" }

// Roots are none: an export is wherever the user unpacked it.
func (Format) Roots(func(string) string, string) []string { return nil }

// Bundles lists every My Activity page under root (MyActivity.html,
// "My Activity.html"), leaving out dependency, build and
// version-control directories; root itself may be one page, read
// whatever its name.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.NamedFiles(ctx, Tool, root, func(name string) bool {
		n := strings.ToLower(strings.ReplaceAll(name, " ", ""))
		return n == "myactivity.html" || n == "myactivity.htm"
	})
}

// stamp is the time of a record in the English export: month, day,
// year, a 12-hour time and the zone.
var stamp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{1,2}), (\d{4}), (\d{1,2}:\d{2}:\d{2}) ?(AM|PM) ([A-Z]{2,5}(?:[+-]\d{1,2}(?::\d{2})?)?)`)
})

// zones are the offsets of the zone names the export writes.
var zones = map[string]int{
	"UTC": 0, "GMT": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6,
	"PST": -8, "PDT": -7, "AKST": -9, "AKDT": -8, "HST": -10, "BST": 1, "CET": 1, "CEST": 2,
}

// parseStamp is the time of m, a match of stamp, and whether its zone
// is known.
func parseStamp(m []string) (time.Time, bool) {
	zone := m[6]
	offset, ok := zones[zone]
	secs := offset * 3600
	if !ok {
		rest, found := strings.CutPrefix(zone, "GMT")
		if !found || rest == "" {
			return time.Time{}, false
		}
		sign := 1
		switch rest[0] {
		case '+':
		case '-':
			sign = -1
		default:
			return time.Time{}, false
		}
		h, mm, _ := strings.Cut(rest[1:], ":")
		hours, err := strconv.Atoi(h)
		minutes := 0
		if mm != "" {
			minutes, err = strconv.Atoi(mm)
		}
		if err != nil || hours > 14 || minutes > 59 {
			return time.Time{}, false
		}
		secs = sign * (hours*3600 + minutes*60)
	}
	t, err := time.ParseInLocation("Jan 2 2006 3:04:05 PM", m[1]+" "+m[2]+" "+m[3]+" "+m[4]+" "+m[5], time.FixedZone(zone, secs))
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// Read reads one My Activity page.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	return importer.ReadWhole(Tool, b, func(name string, data []byte, _ time.Time) *importer.Result {
		return parse(ctx, name, data)
	})
}

func parse(ctx context.Context, name string, data []byte) *importer.Result {
	res := &importer.Result{}
	if len(bytes.TrimSpace(data)) == 0 {
		res.Empty(name)
		return res
	}
	if !utf8.Valid(data) {
		// The parser would make them U+FFFD in silence: marked, so that
		// the record they are in says so.
		data = []byte(strings.ToValidUTF8(string(data), notUTF8))
	}
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		res.Unreadablef(name, 0, "not HTML: "+err.Error())
		return res
	}
	cells := find(doc, func(n *html.Node) bool { return hasClass(n, "outer-cell") })
	if len(cells) == 0 {
		res.Unreadablef(name, 0, "not a Takeout My Activity page: no activity record in it")
		return res
	}
	untimed, foreign := 0, 0
	var recs []rec
	for _, cell := range cells {
		if ctx.Err() != nil {
			return res
		}
		r, ok := record(cell)
		switch {
		case !ok:
			res.Skip("activity:unknown")
			continue
		case !strings.EqualFold(r.product, "Gemini Apps"):
			res.Skip("other-product")
			foreign++
			continue
		case r.label != "prompted":
			res.Skip(importer.TypeName("activity:" + r.label))
			continue
		case r.at.IsZero():
			untimed++
			continue
		case strings.TrimSpace(r.prompt) == "":
			res.Skip("empty-prompt")
			continue
		}
		if strings.Contains(r.prompt+r.reply, notUTF8) {
			res.Problemf(name, 0, "the prompt of "+r.at.Format(time.RFC3339)+": "+importer.NotUTF8)
			r.prompt, r.reply = strings.ReplaceAll(r.prompt, notUTF8, "\ufffd"), strings.ReplaceAll(r.reply, notUTF8, "\ufffd")
		}
		recs = append(recs, r)
	}
	// A record's id is its time and how many of that time come after it
	// in the page (the newest first): a later export, which adds records
	// at its top, gives each the same.
	seen := map[time.Time]int{}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		n := seen[r.at]
		seen[r.at]++
		h := sha256.Sum256([]byte(r.at.Format(time.RFC3339) + "\x00" + strconv.Itoa(n)))
		s := &importer.Session{SourceID: hex.EncodeToString(h[:12]), Kind: loom.KindMain, Path: name, Provider: "google", CreatedAt: r.at, UpdatedAt: r.at}
		s.Messages = append(s.Messages, &loom.Message{ID: "prompt", Role: loom.RoleUser, CreatedAt: r.at,
			Parts: []loom.Part{{ID: "prompt/0", Type: loom.PartText, Text: r.prompt}}})
		if strings.TrimSpace(r.reply) != "" {
			s.Messages = append(s.Messages, &loom.Message{ID: "reply", Role: loom.RoleAssistant, Provider: "google", CreatedAt: r.at,
				Parts: []loom.Part{{ID: "reply/0", Type: loom.PartText, Text: r.reply}}})
		}
		for _, m := range s.Messages {
			at := m.CreatedAt
			m.CompletedAt = &at
		}
		res.Keep(s, "record")
	}
	if untimed > 0 {
		res.Problemf(name, 0, fmt.Sprintf("%d Gemini Apps prompts not read: their time is not in the form of an English export (loom reads the export in English only)", untimed))
	}
	if foreign == len(cells) {
		res.Skip("no-gemini-apps-record")
	}
	return res
}

// notUTF8 stands, while a page is read, for bytes of it that are not
// UTF-8: a character of the last private-use plane, which no export
// writes.
const notUTF8 = "\U0010FFFD"

// rec is what a record's cell says.
type rec struct {
	product, label string
	at             time.Time
	prompt, reply  string
}

// record reads a record's cell: its product, label, time, prompt and
// reply; false when it is no record (no header cell).
func record(cell *html.Node) (rec, bool) {
	var r rec
	header := first(cell, func(n *html.Node) bool { return hasClass(n, "header-cell") })
	if header == nil {
		return r, false
	}
	content := first(cell, func(n *html.Node) bool {
		return hasClass(n, "content-cell") && !hasClass(n, "mdl-typography--text-right") && !hasClass(n, "mdl-typography--caption")
	})
	// The header's paragraphs and headings: the product first, then (in
	// agentsview's layout) the label and the time.
	var heads []string
	for _, n := range find(header, func(n *html.Node) bool {
		return n.Type == html.ElementNode && (n.Data == "p" || len(n.Data) == 2 && n.Data[0] == 'h' && n.Data[1] >= '1' && n.Data[1] <= '6')
	}) {
		if t := clean(text(n)); t != "" {
			heads = append(heads, t)
		}
	}
	if len(heads) == 0 {
		return r, false
	}
	r.product = heads[0]
	if len(heads) > 1 {
		// The label and the time in the header.
		r.label = strings.ToLower(heads[1])
		for _, h := range heads[2:] {
			if m := stamp().FindStringSubmatch(normal(h)); m != nil {
				r.at, _ = parseStamp(m)
			}
		}
		if content != nil {
			var blocks []string
			for c := content.FirstChild; c != nil; c = c.NextSibling {
				if t := clean(text(c)); t != "" && stamp().FindString(normal(t)) != normal(t) {
					blocks = append(blocks, t)
				}
			}
			if len(blocks) > 0 {
				r.prompt, r.reply = blocks[0], strings.Join(blocks[1:], "\n\n")
			}
		}
		return r, true
	}
	if content == nil {
		return r, true
	}
	// The label, prompt and time as the content's first lines.
	all := clean(text(content))
	label, _, _ := strings.Cut(normal(firstLine(all)), " ")
	r.label = strings.ToLower(label)
	at := normal(all)
	idx := stamp().FindStringSubmatchIndex(at)
	if idx == nil {
		r.prompt = strings.TrimSpace(strings.TrimPrefix(normal(firstLine(all)), label))
		return r, true
	}
	m := make([]string, 0, 7)
	for i := 0; i < len(idx); i += 2 {
		m = append(m, at[idx[i]:idx[i+1]])
	}
	r.at, _ = parseStamp(m)
	before, after := at[:idx[0]], at[idx[1]:]
	r.prompt = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(before), label))
	r.reply = strings.TrimSpace(after)
	return r, true
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// normal is s with its no-break spaces made spaces.
func normal(s string) string {
	return strings.NewReplacer("\u00a0", " ", "\u202f", " ", "\u2009", " ").Replace(s)
}

// blocks are the elements that stand on lines of their own.
var blocks = map[string]bool{
	"p": true, "div": true, "li": true, "ul": true, "ol": true, "pre": true, "blockquote": true, "table": true, "tr": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
}

// text is n's visible text: its lines broken at <br> and around
// blocks, the text of <pre> as it is, scripts and styles left out.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node, pre bool)
	walk = func(n *html.Node, pre bool) {
		switch n.Type {
		case html.TextNode:
			if pre {
				b.WriteString("\x00" + n.Data + "\x01")
				return
			}
			b.WriteString(n.Data)
			return
		case html.ElementNode:
		default:
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c, pre)
			}
			return
		}
		switch n.Data {
		case "script", "style", "template", "noscript", "head":
			return
		case "br":
			b.WriteString("\n")
			return
		}
		if blocks[n.Data] {
			b.WriteString("\n\n")
		}
		if n.Data == "li" {
			b.WriteString("- ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, pre || n.Data == "pre")
		}
		if blocks[n.Data] {
			b.WriteString("\n\n")
		}
	}
	walk(n, false)
	return b.String()
}

// clean is what text made, its spaces collapsed (but in <pre>, which
// it marks), its lines trimmed, no more than one blank line in a row,
// and characters that are not text left out.
func clean(s string) string {
	var out strings.Builder
	blank := 0
	pre := false
	for _, line := range strings.Split(s, "\n") {
		var l strings.Builder
		space := false
		for _, r := range line {
			switch {
			case r == 0:
				pre = true
				continue
			case r == 1:
				pre = false
				continue
			case pre:
				l.WriteRune(r)
				continue
			case r == '\u00a0' || r == '\u202f':
				// Kept: the export writes the label and the time's AM
				// with them.
				space = false
				l.WriteRune(r)
				continue
			case unicode.IsSpace(r):
				space = l.Len() > 0
				continue
			case unicode.IsControl(r):
				continue
			}
			if space {
				l.WriteByte(' ')
				space = false
			}
			l.WriteRune(r)
		}
		t := l.String()
		if !pre {
			t = strings.TrimSpace(t)
		}
		if t == "" {
			blank++
			continue
		}
		if out.Len() > 0 {
			if blank > 0 {
				out.WriteString("\n\n")
			} else {
				out.WriteString("\n")
			}
		}
		blank = 0
		out.WriteString(t)
	}
	return strings.TrimSpace(out.String())
}

func hasClass(n *html.Node, class string) bool {
	if n.Type != html.ElementNode {
		return false
	}
	for _, a := range n.Attr {
		if a.Key == "class" {
			for _, c := range strings.Fields(a.Val) {
				if c == class {
					return true
				}
			}
		}
	}
	return false
}

// find is every node below n (n too) that match accepts, not looking
// inside those it accepts.
func find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if match(n) {
			out = append(out, n)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

// first is the first node below n that match accepts, nil when none.
func first(n *html.Node, match func(*html.Node) bool) *html.Node {
	if found := find(n, match); len(found) > 0 {
		return found[0]
	}
	return nil
}
