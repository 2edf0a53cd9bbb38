package hooks

import (
	"context"
	"fmt"
	"os"
	"slices"
)

// What loom capture uses of the hooks: the import hooks alone, added to
// every agent found and taken out of those it added them to.

// InstallImports adds loom's import hooks to the settings of every
// agent whose directory exists (none found: no report, no error). An
// agent whose settings cannot take them (a file that is not plain JSON,
// Codex running another notify program) is a problem, and the others
// are still done.
func InstallImports(pl Places) (reports []*Report, problems []error) {
	prog := hookCommand()
	for _, a := range agents {
		if fi, err := os.Stat(a.dir(pl)); err != nil || !fi.IsDir() {
			continue
		}
		r, err := apply(pl, a, prog, true, false, false)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		reports = append(reports, r)
	}
	return reports, problems
}

// UninstallImports takes loom's import hooks out of the named agents'
// settings, leaving their recall hooks.
func UninstallImports(pl Places, names []string) (reports []*Report, problems []error) {
	prog := hookCommand()
	for _, a := range agents {
		if !slices.Contains(names, a.name) {
			continue
		}
		r, err := apply(pl, a, prog, false, false, false)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		reports = append(reports, r)
	}
	return reports, problems
}

// Statuses says, for every agent that has hooks, which of loom's its
// settings file holds, and whether the loom they name runs.
func Statuses(ctx context.Context, pl Places) ([]*Report, error) {
	var out []*Report
	runs := map[string]string{}
	for _, a := range agents {
		r, err := statusOf(pl, a)
		if err != nil {
			return nil, err
		}
		checkRuns(ctx, r, runs)
		out = append(out, r)
	}
	return out, nil
}

// Label is the agent's name as people know it ("Claude Code").
func Label(agent string) string {
	for _, a := range agents {
		if a.name == agent {
			return a.label
		}
	}
	return agent
}

// Short is p with the home directory as ~.
func Short(pl Places, p string) string { return shortPath(pl, p) }

// String says what r's command changed, for a line of output.
func (r *Report) String() string {
	switch {
	case len(r.Added) > 0:
		return fmt.Sprintf("added %v", r.Added)
	case len(r.Removed) > 0:
		return fmt.Sprintf("removed %v", r.Removed)
	case len(r.Updated) > 0:
		return fmt.Sprintf("updated %v", r.Updated)
	}
	return "unchanged"
}
