package command

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// MessageRenderer writes messages for people: a header line per message,
// its text (what the model wrote as rendered Markdown on a terminal, what
// the user typed as typed), and one line per tool call, file or sub-agent. Reasoning is
// shown only when asked for, because it is long and rarely what a reader
// is looking for. Everything printed from a message is stored text and
// is escaped for the terminal (term.Sanitize) before it is styled.
type MessageRenderer struct {
	ios          *term.IOStreams
	cs           *term.ColorScheme
	now          time.Time
	showThinking bool
	// tools is how much of a tool call is shown under its line.
	Tools toolDetail
	// FoldSystem shows a system message's text on one line: what an
	// agent was told (its system prompt, the instruction files and
	// environment it was given) is kept, but it is not the
	// conversation, and a page of it would bury the prompt.
	FoldSystem bool
}

// toolDetail is how much of a tool call a renderer shows.
type toolDetail int

const (
	toolsLine  toolDetail = iota // the call's line only
	ToolsBrief                   // its input on one line and the first toolOutputLines of its output
	ToolsFull                    // its whole input and output
)

// toolOutputLines is how many lines of a tool's output toolsBrief shows.
const toolOutputLines = 5

func NewMessageRenderer(ios *term.IOStreams, now time.Time, showThinking bool) *MessageRenderer {
	return &MessageRenderer{ios: ios, cs: ios.ColorScheme(), now: now, showThinking: showThinking}
}

func (r *MessageRenderer) roleColor(role string) func(string) string {
	switch role {
	case loom.RoleUser:
		return r.cs.Green
	case loom.RoleAssistant:
		return r.cs.Cyan
	case loom.RoleTool:
		return r.cs.Yellow
	case loom.RoleSummary:
		return r.cs.Magenta
	}
	return r.cs.Gray
}

// Render writes one message.
func (r *MessageRenderer) Render(w io.Writer, m *loom.Message) error {
	var b strings.Builder
	head := []string{r.roleColor(m.Role)(r.cs.Bold(m.Role))}
	if m.Model != "" && m.Role != loom.RoleUser {
		head = append(head, term.SanitizeLine(m.Model))
	}
	head = append(head, term.DisplayTime(r.ios, m.CreatedAt, r.now))
	fmt.Fprintf(&b, "%s %s\n", r.cs.Gray(fmt.Sprintf("── #%d", m.Seq)), strings.Join(head, r.cs.Gray(" · ")))
	for _, p := range m.Parts {
		r.part(&b, m.Role, p)
	}
	if m.Error != nil && m.Error.Message != "" {
		fmt.Fprintf(&b, "%s %s\n", r.cs.Red("error:"), term.SanitizeLine(m.Error.Message))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *MessageRenderer) part(b *strings.Builder, role string, p loom.Part) {
	switch p.Type {
	case loom.PartText:
		t := strings.TrimRight(p.Text, "\n")
		switch {
		case strings.TrimSpace(t) == "":
		case role == loom.RoleSystem && r.FoldSystem:
			r.folded(b, t)
		case r.cs.Enabled() && (role == loom.RoleAssistant || role == loom.RoleSummary):
			// What the model wrote is shown as its live reply was:
			// rendered Markdown on a terminal, plain text elsewhere.
			b.WriteString(term.RenderMarkdown(t, r.ios.TerminalWidth()))
		default:
			b.WriteString(term.Sanitize(t) + "\n")
		}
	case loom.PartReasoning:
		if !r.showThinking || strings.TrimSpace(p.Text) == "" {
			return
		}
		b.WriteString(ThinkingBlock(r.cs, p.Text, r.ios.TerminalWidth()))
	case loom.PartTool:
		b.WriteString(r.toolLine(p) + "\n")
		r.toolBody(b, p)
	case loom.PartFile:
		name := p.Filename
		if name == "" && p.Source != nil {
			name = p.Source.Path
		}
		if name == "" {
			name = p.URL
		}
		line := "  📎 " + term.SanitizeLine(name)
		if p.Mime != "" {
			line += r.cs.Gray(" (" + term.SanitizeLine(p.Mime) + ")")
		}
		b.WriteString(line + "\n")
	case loom.PartAgent:
		line := "  ↳ sub-agent " + r.cs.Bold(term.SanitizeLine(p.Name))
		if p.SessionID != "" {
			line += r.cs.Gray(" → session " + term.SanitizeLine(p.SessionID))
		}
		b.WriteString(line + "\n")
	}
}

// folded writes a system message's text folded: its first line, cut to
// the screen's width, and how much more there is.
func (r *MessageRenderer) folded(b *strings.Builder, text string) {
	lines := nonEmptyLines(text)
	width := max(40, r.ios.TerminalWidth()-2)
	first := strings.TrimSpace(lines[0])
	shown := Truncate(first, width)
	b.WriteString(shown + "\n")
	more := 0
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) != "" {
			more++
		}
	}
	if more > 0 || shown != first {
		what := "cut"
		if more > 0 {
			what = human.Plural(more, "more line")
		}
		b.WriteString(r.cs.Gray(fmt.Sprintf("  … %s folded (--full shows them)", what)) + "\n")
	}
}

// toolLine is a tool call on one line: name, status, duration, title,
// and the error of a failed call.
func (r *MessageRenderer) toolLine(p loom.Part) string {
	status := term.SanitizeLine(p.Status)
	switch p.Status {
	case loom.ToolCompleted:
		status = r.cs.Green(status)
	case loom.ToolError:
		status = r.cs.Red(status)
	default:
		status = r.cs.Yellow(status)
	}
	fields := []string{r.cs.Bold(term.SanitizeLine(p.Name)), status}
	if p.StartedAt != nil && p.EndedAt != nil {
		fields = append(fields, human.Duration(p.EndedAt.Sub(*p.StartedAt)))
	}
	if p.Title != "" {
		fields = append(fields, term.SanitizeLine(p.Title))
	}
	line := "  ⚙ " + strings.Join(fields, r.cs.Gray(" · "))
	if p.Status == loom.ToolError && p.Error != "" {
		line += r.cs.Red(": " + Truncate(term.SanitizeLine(p.Error), 120))
	}
	return line
}

// toolBody writes what a tool call was given and what it returned, under
// its line, as much of them as r.tools asks for. An error is on the
// call's line already.
func (r *MessageRenderer) toolBody(b *strings.Builder, p loom.Part) {
	if r.Tools == toolsLine {
		return
	}
	const indent = "    "
	if r.Tools == ToolsFull {
		for _, l := range nonEmptyLines(human.PrettyJSON(p.Input)) {
			b.WriteString(r.cs.Gray(indent+"› "+l) + "\n")
		}
	} else if in := term.SanitizeLine(human.InputLine(p.Input)); in != "" && in != term.SanitizeLine(p.Title) {
		b.WriteString(indent + Truncate(in, max(40, r.ios.TerminalWidth()-len(indent))) + "\n")
	}
	out := nonEmptyLines(human.OutputText(p.Output))
	shown := out
	if r.Tools == ToolsBrief && len(out) > toolOutputLines {
		shown = out[:toolOutputLines]
	}
	for _, l := range shown {
		if l == "" {
			b.WriteString(r.cs.Gray(indent+"│") + "\n")
			continue
		}
		if r.Tools == ToolsBrief {
			// A brief is a few lines of the screen's width, not a
			// 2,000-character line of minified output.
			l = Truncate(l, max(40, r.ios.TerminalWidth()-len(indent)-2))
		}
		b.WriteString(r.cs.Gray(indent+"│ ") + l + "\n")
	}
	if n := len(out) - len(shown); n > 0 {
		b.WriteString(r.cs.Gray(fmt.Sprintf("%s… %s (--full shows all)", indent, human.Plural(n, "more line"))) + "\n")
	}
}

// nonEmptyLines splits stored text into escaped lines, without the blank
// lines at its ends; none for blank text.
func nonEmptyLines(s string) []string {
	s = strings.Trim(s, "\n")
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return strings.Split(term.Sanitize(s), "\n")
}
