package picker

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// maxPreviewText bounds how much of one text part the preview draws: it
// shows the end of a conversation, not whole pasted files.
const maxPreviewText = 2000

// maxToolInput bounds how much of a tool call's input, on one line, the
// preview draws under the call.
const maxToolInput = 400

// previewLines draws the selected session's newest messages in h lines
// of w cells; when they do not fit, the newest are kept.
func (m *Model) previewLines(w, h int) []string {
	var lines []string
	key, id, _ := m.previewKey()
	p := m.previews[key]
	switch {
	case id == "":
	case p == nil || p.loading:
		lines = []string{m.sty.dim.Render("loading…")}
	case p.err != nil:
		lines = []string{m.sty.err.Render(fit("error: "+term.SanitizeLine(loom.ErrorMessage(p.err)), w))}
	case len(p.msgs) == 0:
		lines = []string{m.sty.dim.Render("No messages.")}
	default:
		if p.width != w {
			p.lines, p.starts = m.drawPreview(p.msgs, p.focus, w)
			p.width = w
		}
		lines = p.lines
		// The newest messages that fit whole, or the start of the
		// newest when it alone does not fit; a search's hit from its
		// start, with the message before it when that fits too.
		from := p.starts[len(p.starts)-1]
		for _, st := range p.starts {
			if len(lines)-st <= h {
				from = st
				break
			}
		}
		for i, msg := range p.msgs {
			if msg.Seq != p.focus {
				continue
			}
			from = p.starts[i]
			if i > 0 && from-p.starts[i-1] <= h/3 {
				from = p.starts[i-1]
			}
		}
		lines = lines[from:]
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	out := make([]string, h)
	copy(out, lines)
	return out
}

// drawPreview draws msgs in w cells and says where each starts; the
// message of seq focus (a search's hit) is marked.
func (m *Model) drawPreview(msgs []*loom.Message, focus int64, w int) (lines []string, starts []int) {
	cs := term.NewColorScheme(m.opts.Color)
	add := func(block string) {
		for _, l := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
			lines = append(lines, fit(l, w))
		}
	}
	for i, msg := range msgs {
		if i > 0 {
			lines = append(lines, "")
		}
		starts = append(starts, len(lines))
		head := []string{cs.Bold(msg.Role)}
		if msg.Model != "" && msg.Role != loom.RoleUser {
			head = append(head, term.SanitizeLine(msg.Model))
		}
		head = append(head, human.ShortAgo(m.now, msg.CreatedAt))
		if msg.Seq == focus && focus > 0 {
			head = append(head, cs.Bold("◀ the match"))
		}
		add(fmt.Sprintf("%s %s", cs.Gray(fmt.Sprintf("#%d", msg.Seq)), strings.Join(head, cs.Gray(" · "))))
		for _, p := range msg.Parts {
			switch p.Type {
			case loom.PartText:
				t := strings.TrimSpace(cut(p.Text, maxPreviewText))
				switch {
				case t == "":
				case m.opts.Color && (msg.Role == loom.RoleAssistant || msg.Role == loom.RoleSummary):
					add(term.RenderMarkdown(t, w+2)) // which escapes t
				default:
					add(ansi.Wrap(strings.ReplaceAll(term.Sanitize(t), "\t", "    "), w, ""))
				}
			case loom.PartTool:
				add(cs.Gray(fmt.Sprintf("  tool %s · %s", term.SanitizeLine(p.Name), p.Status)))
				// What it was given, where a search may have matched
				// it: a command, a path, a query.
				if in := term.SanitizeLine(cut(human.InputLine(p.Input), maxToolInput)); in != "" {
					add(ansi.Wrap("    "+in, w, ""))
				}
			case loom.PartFile:
				name := p.Filename
				if name == "" && p.Source != nil {
					name = p.Source.Path
				}
				add(cs.Gray("  file " + term.SanitizeLine(name)))
			case loom.PartAgent:
				add(cs.Gray("  sub-agent " + term.SanitizeLine(p.Name)))
			}
		}
		if msg.Error != nil && msg.Error.Message != "" {
			add(cs.Red("  error: " + term.SanitizeLine(msg.Error.Message)))
		}
	}
	return lines, starts
}

// cut keeps the first n bytes of s, on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
