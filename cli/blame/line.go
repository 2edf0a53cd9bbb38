package blame

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/fileedit"
)

// excerptLines bounds each piece of an excerpt on a terminal.
const excerptLines = 24

// lineRun prints one line and, for an agent's, the conversation around
// the edit that wrote it.
func lineRun(ctx context.Context, o *Options, st loom.Store, res *blame.Result) error {
	l := res.Lines[0]
	var x *blame.Excerpt
	if l.SessionID != "" && l.Source == "" {
		var err error
		st = o.storeOf(st, l.SessionID)
		if x, err = blame.ExcerptOf(ctx, st, l); err != nil {
			return err
		}
	}
	if o.JSON {
		if x == nil {
			x = &blame.Excerpt{Line: l}
		}
		return command.WriteJSON(o.IO.Out, x)
	}
	cs := o.IO.ColorScheme()
	w := o.IO.Out
	fmt.Fprintf(w, "%s %s:%d\n", cs.Bold("line"), term.SanitizeLine(res.Path), l.N)
	fmt.Fprintf(w, "  %s\n", showLine(l.Text))
	switch {
	case l.SessionID == "":
		who := l.Kind
		if l.Commit != "" {
			who += ", commit " + l.Commit[:min(12, len(l.Commit))]
		}
		if l.Source != "" {
			if l.Agent != "" {
				who += ", recorded by " + l.Agent
			}
			if l.Model != "" {
				who += ", model " + l.Model
			}
			if l.Conversation != "" {
				who += ", conversation " + l.Conversation
			}
			who = term.SanitizeLine(who) + " " + fromRecord(l)
		}
		fmt.Fprintf(w, "%s %s\n", cs.Bold("written by"), who)
		return nil
	case x == nil:
		fmt.Fprintf(w, "%s %s %s, model %s, conversation %s %s\n", cs.Bold("written by"), l.Kind,
			term.SanitizeLine(l.Agent), term.SanitizeLine(l.Model), term.SanitizeLine(l.SessionID), fromRecord(l))
		return nil
	}
	kind := "an agent"
	switch {
	case l.Kind == blame.Mixed:
		kind = "an agent, then changed by a human"
	case l.Evidence == blame.EvidenceShell:
		kind = "an agent's sed or perl command (its substitution gives this line)"
	case l.Evidence == blame.EvidenceProgram:
		kind = "probably an agent: a program it ran names this file as one it writes (lower confidence)"
	}
	fmt.Fprintf(w, "%s %s: %s, model %s\n", cs.Bold("written by"), kind, term.SanitizeLine(l.Agent), term.SanitizeLine(l.Model))
	if l.Member != "" {
		fmt.Fprintf(w, "%s %s\n", cs.Bold("member"), term.SanitizeLine(l.Member))
	}
	when := ""
	if l.At != nil {
		when = ", " + l.At.Local().Format("2006-01-02 15:04")
	}
	fmt.Fprintf(w, "%s %s %q, turn %d%s\n", cs.Bold("session"), o.DisplayID(ctx, st, l.SessionID), term.SanitizeLine(x.Title), l.Turn, when)
	section(w, cs, "prompt", []string{x.Prompt})
	section(w, cs, "reasoning", x.Reasoning)
	section(w, cs, "before the edit", x.Before)
	section(w, cs, "edit ("+x.Edit.Name+")", []string{editText(x.Edit)})
	section(w, cs, "after", x.After)
	team := ""
	if o.union != nil && o.union.Holds(l.SessionID) > 0 {
		team = " --team " + teamOf(o, l.SessionID)
	}
	fmt.Fprintf(w, "\n%s loom session show%s %s --turn %d\n", cs.Gray("the whole turn:"), team, l.SessionID, l.Turn)
	return nil
}

// section prints a titled piece of an excerpt, each text cut to
// excerptLines lines.
func section(w io.Writer, cs *term.ColorScheme, title string, texts []string) {
	var lines []string
	for _, t := range texts {
		lines = append(lines, strings.Split(strings.TrimRight(t, "\n"), "\n")...)
	}
	if len(lines) == 0 || len(lines) == 1 && strings.TrimSpace(lines[0]) == "" {
		return
	}
	fmt.Fprintf(w, "\n%s\n", cs.Bold(title))
	for i, l := range lines {
		if i == excerptLines {
			fmt.Fprintf(w, "  %s\n", cs.Gray(fmt.Sprintf("… %d more lines", len(lines)-i)))
			break
		}
		fmt.Fprintf(w, "  %s\n", showLine(l))
	}
}

// editText is an edit as a diff: a write's lines, an edit's old lines
// and new ones.
func editText(p *loom.Part) string {
	cs := fileedit.Extract([]loom.Part{*p}, "")
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s %s\n", c.Op, c.Path)
		switch {
		case c.Op == loom.EditWrite:
			for _, l := range fileedit.Lines(c.Content) {
				b.WriteString("+ " + l + "\n")
			}
		case c.Op == loom.EditShell:
			b.WriteString("$ " + c.Command + "\n")
		default:
			for _, r := range c.Replace {
				for _, l := range fileedit.Lines(r.Old) {
					b.WriteString("- " + l + "\n")
				}
				for _, l := range fileedit.Lines(r.New) {
					b.WriteString("+ " + l + "\n")
				}
			}
		}
	}
	if b.Len() == 0 {
		return loom.JSONText(p.Input)
	}
	return b.String()
}

// fromRecord says where a line's attribution read from the repository
// came from: a git note of the Git AI standard, or an Agent Trace
// record.
func fromRecord(l blame.Line) string {
	if l.Source == "notes" {
		return "(from a git note of the Git AI standard)"
	}
	return "(from an Agent Trace record)"
}
