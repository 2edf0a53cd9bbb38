package export

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/human"
)

// writeMarkdown writes sessions as a readable document: metadata, then
// every message with its parts, reasoning folded away.
func writeMarkdown(w io.Writer, data []*loom.SessionData) error {
	bw := bufio.NewWriter(w)
	for i, d := range data {
		if i > 0 {
			bw.WriteString("---\n\n")
		}
		writeMarkdownSession(bw, d.Session)
		for _, m := range d.Messages {
			writeMarkdownMessage(bw, m)
		}
	}
	return bw.Flush()
}

func writeMarkdownSession(bw *bufio.Writer, s *loom.Session) {
	title := s.Title
	if title == "" {
		title = "Untitled session"
	}
	if s.Kind == loom.KindSubagent {
		title = "Sub-agent session: " + title
	}
	fmt.Fprintf(bw, "# %s\n\n", mdEscape(title))
	meta := [][2]string{
		{"id", "`" + s.ID + "`"},
		{"key", codeOrEmpty(s.Key)},
		{"kind", s.Kind},
		{"parent", codeOrEmpty(s.ParentID)},
	}
	if s.Kind == loom.KindFork {
		meta = append(meta, [2]string{"forked at turn", fmt.Sprint(s.ForkTurn)})
	}
	if s.Project.Root != "" {
		meta = append(meta, [2]string{"project", s.Project.Name + " (`" + s.Project.Root + "`)"})
	}
	model := s.Model
	if s.Provider != "" && model != "" {
		model = s.Provider + ":" + model
	}
	meta = append(meta,
		[2]string{"model", model},
		[2]string{"profile", s.Profile},
		[2]string{"created", loom.FormatTime(s.CreatedAt)},
		[2]string{"updated", loom.FormatTime(s.UpdatedAt)},
		[2]string{"messages", fmt.Sprintf("%d in %s", s.MessageCount, human.Plural(s.TurnCount, "turn"))},
	)
	if !s.Usage.IsZero() {
		meta = append(meta, [2]string{"usage", human.Usage(s.Usage)})
	}
	for _, kv := range meta {
		if kv[1] != "" {
			fmt.Fprintf(bw, "- **%s:** %s\n", kv[0], kv[1])
		}
	}
	if s.Description != "" {
		fmt.Fprintf(bw, "\n%s\n", s.Description)
	}
	bw.WriteString("\n")
}

func writeMarkdownMessage(bw *bufio.Writer, m *loom.Message) {
	head := fmt.Sprintf("%d. %s", m.Seq, m.Role)
	if m.Model != "" && m.Role != loom.RoleUser {
		head += " (" + m.Model + ")"
	}
	fmt.Fprintf(bw, "## %s · %s\n\n", head, loom.FormatTime(m.CreatedAt))
	for _, p := range m.Parts {
		switch p.Type {
		case loom.PartText:
			if t := strings.TrimSpace(p.Text); t != "" {
				fmt.Fprintf(bw, "%s\n\n", t)
			}
		case loom.PartReasoning:
			if t := strings.TrimSpace(p.Text); t != "" {
				fmt.Fprintf(bw, "<details><summary>Thinking</summary>\n\n%s\n\n</details>\n\n", t)
			}
		case loom.PartTool:
			writeMarkdownTool(bw, p)
		case loom.PartFile:
			name := p.Filename
			if name == "" && p.Source != nil {
				name = p.Source.Path
			}
			fmt.Fprintf(bw, "**File** `%s`", name)
			if p.Mime != "" {
				fmt.Fprintf(bw, " (%s)", p.Mime)
			}
			if p.URL != "" && !strings.HasPrefix(p.URL, "data:") {
				fmt.Fprintf(bw, " <%s>", p.URL)
			}
			bw.WriteString("\n\n")
		case loom.PartAgent:
			fmt.Fprintf(bw, "**Sub-agent** `%s`", p.Name)
			if p.SessionID != "" {
				fmt.Fprintf(bw, " → session `%s`", p.SessionID)
			}
			bw.WriteString("\n\n")
		}
	}
	if m.Error != nil && m.Error.Message != "" {
		fmt.Fprintf(bw, "**Error:** %s\n\n", mdEscape(m.Error.Message))
	}
}

func writeMarkdownTool(bw *bufio.Writer, p loom.Part) {
	line := fmt.Sprintf("**Tool `%s`** · %s", p.Name, p.Status)
	if p.StartedAt != nil && p.EndedAt != nil {
		line += " · " + human.Duration(p.EndedAt.Sub(*p.StartedAt))
	}
	if p.Title != "" {
		line += " · " + mdEscape(human.OneLine(p.Title))
	}
	fmt.Fprintf(bw, "%s\n\n", line)
	if in := human.PrettyJSON(p.Input); in != "" {
		fmt.Fprintf(bw, "Input:\n\n%s\n\n", fenced("json", in))
	}
	if len(p.Output) > 0 && string(p.Output) != "null" {
		fmt.Fprintf(bw, "Output:\n\n%s\n\n", fenced("", human.OutputText(p.Output)))
	}
	if p.Error != "" {
		fmt.Fprintf(bw, "Error:\n\n%s\n\n", fenced("", p.Error))
	}
}

func codeOrEmpty(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// mdEscape keeps text from starting Markdown constructs by accident.
func mdEscape(s string) string {
	r := strings.NewReplacer("*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;")
	return r.Replace(s)
}

// fenced wraps s in a code fence longer than any run of backticks in it.
func fenced(lang, s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + fence
}
