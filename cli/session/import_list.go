package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/importer"
)

// AgentFound is what `loom session import --from list` says of one agent:
// where it keeps its sessions on this machine, and how many it holds.
type AgentFound struct {
	Agent string `json:"agent"`
	// Found is whether any of its locations is on this machine.
	Found bool `json:"found"`
	// Paths are its locations on this machine, or the ones it would use
	// when none is.
	Paths []string `json:"paths"`
	// Sessions counts the sessions found there: a file of one session
	// counts one, a database (opencode's, Kilo's, goose's…) as many as
	// it holds.
	Sessions int `json:"sessions"`
	// Problem is why a location could not be read, "" when it could.
	Problem string `json:"problem,omitempty"`
}

// importList prints every agent loom reads, whether it is on this
// machine, where and how many sessions it holds: reading directory
// entries, and counting the sessions of a database with one query.
func importList(ctx context.Context, opts *ImportOptions) error {
	home := opts.Home()
	out := []AgentFound{}
	shared := importer.SharedRoots(opts.Formats, opts.Getenv, home)
	for _, fm := range opts.Formats {
		a := AgentFound{Agent: fm.Tool(), Paths: []string{}}
		roots := fm.Roots(opts.Getenv, home)
		for _, r := range roots {
			if _, err := os.Stat(r); err != nil {
				continue
			}
			bs, err := fm.Bundles(ctx, r)
			n, cerr := importer.CountSessions(ctx, fm, bs)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if shared[filepath.Clean(r)] && n == 0 && err == nil && cerr == nil {
				// Another agent's directory too, with none of this
				// one's sessions: that one is there, not this one.
				continue
			}
			a.Found = true
			a.Paths = append(a.Paths, r)
			a.Sessions += n
			if err == nil {
				err = cerr
			}
			if err != nil && a.Problem == "" {
				a.Problem = err.Error()
			}
		}
		if !a.Found {
			a.Paths = append(a.Paths, roots...)
		}
		out = append(out, a)
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, out)
	}
	if err := writeAgentsFound(opts.IO, out, home); err != nil {
		return err
	}
	found := 0
	for _, a := range out {
		if a.Found {
			found++
		}
	}
	if found == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "None of the %d agents' sessions are on this machine.\nName a directory instead: loom session import --from AGENT PATH\n", len(out))
	} else {
		fmt.Fprintf(opts.IO.ErrOut, "%d of %d agents found; loom session import --from all imports them.\n", found, len(out))
	}
	return nil
}

// writeAgentsFound prints the agents as a table that fits the terminal
// (80 columns when piped): the name, the sessions counted right-aligned
// under their header, and where, shortened (the home directory as ~,
// one path and how many more, cut with … at the width); --json has every
// path whole.
func writeAgentsFound(ios *term.IOStreams, agents []AgentFound, home string) error {
	const gap = "  "
	head := [3]string{"AGENT", "SESSIONS", "WHERE"}
	nameW, countW := len(head[0]), len(head[1])
	for _, a := range agents {
		nameW = max(nameW, ansi.StringWidth(term.SanitizeLine(a.Agent)))
		countW = max(countW, len(strconv.Itoa(a.Sessions)))
	}
	whereW := max(ios.TerminalWidth()-nameW-countW-2*len(gap), len(head[2]))
	cs := ios.ColorScheme()
	line := func(name, count, where string, color func(string) string) error {
		name = term.SanitizeLine(name)
		where = ansi.Truncate(term.SanitizeLine(where), whereW, "…")
		text := color(name) + strings.Repeat(" ", nameW-ansi.StringWidth(name)) + gap +
			strings.Repeat(" ", countW-len(count)) + color(count) + gap + color(where)
		_, err := fmt.Fprintln(ios.Out, text)
		return err
	}
	if err := line(head[0], head[1], head[2], cs.Bold); err != nil {
		return err
	}
	plain := func(s string) string { return s }
	for _, a := range agents {
		path, rest := shortPaths(a.Paths, home)
		prefix, count, color := "", strconv.Itoa(a.Sessions), plain
		switch {
		case !a.Found && len(a.Paths) == 0:
			prefix, count, color = "no location of its own: name a PATH", "-", cs.Gray
		case !a.Found:
			prefix, count, color = "not found: ", "-", cs.Gray
		}
		if a.Problem != "" {
			rest += " (" + a.Problem + ")"
		}
		// The path gives way first, in its middle, which keeps the
		// tool's own directory at its end.
		if over := ansi.StringWidth(prefix+path+rest) - whereW; over > 0 {
			path = cutMiddle(path, ansi.StringWidth(path)-over)
		}
		if err := line(a.Agent, count, prefix+path+rest, color); err != nil {
			return err
		}
	}
	return nil
}

// shortPaths is the first of paths with the home directory as ~, and
// what says how many more there are.
func shortPaths(paths []string, home string) (first, more string) {
	if len(paths) == 0 {
		return "", ""
	}
	first = paths[0]
	if home != "" {
		if rest, ok := strings.CutPrefix(first, home+string(filepath.Separator)); ok {
			first = filepath.Join("~", rest)
		}
	}
	if n := len(paths) - 1; n > 0 {
		more = " and " + strconv.Itoa(n) + " more"
	}
	return first, more
}

// cutMiddle shortens s to width cells by putting … in its middle; a
// width too small for that leaves the first cells alone.
func cutMiddle(s string, width int) string {
	w := ansi.StringWidth(s)
	if w <= width {
		return s
	}
	if width < 5 {
		return ansi.Truncate(s, max(width, 0), "")
	}
	head := (width - 1) / 2
	tail := width - 1 - head
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, w-tail, "")
}

// agentNames are the names --from takes, beside all and list.
func agentNames(fs []importer.Format) string {
	var names []string
	for _, fm := range fs {
		names = append(names, fm.Tool())
	}
	return strings.Join(names, ", ")
}
