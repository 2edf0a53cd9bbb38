package session

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/loomhq/loom/cli/command"
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
	// Sessions counts the session files (bundles) found there.
	Sessions int `json:"sessions"`
	// Problem is why a location could not be read, "" when it could.
	Problem string `json:"problem,omitempty"`
}

// importList prints every agent loom reads, whether it is on this
// machine, where and how many sessions it holds; reading directory
// entries only, never the files.
func importList(ctx context.Context, opts *ImportOptions) error {
	home := opts.Home()
	out := []AgentFound{}
	for _, fm := range opts.Formats {
		a := AgentFound{Agent: fm.Tool(), Paths: []string{}}
		roots := fm.Roots(opts.Getenv, home)
		for _, r := range roots {
			if _, err := os.Stat(r); err != nil {
				continue
			}
			a.Found = true
			a.Paths = append(a.Paths, r)
			bs, err := fm.Bundles(ctx, r)
			if err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil && a.Problem == "" {
				a.Problem = err.Error()
			}
			a.Sessions += len(bs)
		}
		if !a.Found {
			a.Paths = append(a.Paths, roots...)
		}
		out = append(out, a)
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, out)
	}
	cs := opts.IO.ColorScheme()
	w := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, cs.Bold("AGENT")+"\t"+cs.Bold("SESSIONS")+"\t"+cs.Bold("WHERE"))
	found := 0
	for _, a := range out {
		where, count := strings.Join(a.Paths, ", "), fmt.Sprint(a.Sessions)
		switch {
		case !a.Found && len(a.Paths) == 0:
			where, count = cs.Gray("no location of its own: loom session import --from "+a.Agent+" PATH"), cs.Gray("-")
		case !a.Found:
			where, count = cs.Gray("not found ("+where+")"), cs.Gray("-")
		default:
			found++
		}
		if a.Problem != "" {
			where += " (" + a.Problem + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", a.Agent, count, where)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if found == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "None of the %d agents' sessions are on this machine (or name a directory: loom session import --from AGENT PATH).\n", len(out))
	} else {
		fmt.Fprintf(opts.IO.ErrOut, "%d of %d agents found on this machine; loom session import --from all imports them.\n", found, len(out))
	}
	return nil
}

// agentNames are the names --from takes, beside all and list.
func agentNames(fs []importer.Format) string {
	var names []string
	for _, fm := range fs {
		names = append(names, fm.Tool())
	}
	return strings.Join(names, ", ")
}
