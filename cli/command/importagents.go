package command

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/pricing"
)

// ImportAgents brings in what every agent with a location of its own
// wrote since the last import, as `loom session import --from all` does
// (incremental and safe beside other importers: a file that did not
// change costs one stat), for the reports that count from the store.
//
// It creates no store where there is nothing to import, and never one
// that --db or $LOOM_DB names and that is missing (a typo): then the
// report alone says so.
func ImportAgents(ctx context.Context, inv *Invocation) (*importer.Report, error) {
	if inv.InTeam() {
		// A team's store holds what the team shares, never one's own.
		return &importer.Report{}, nil
	}
	if _, err := inv.ReadStore(ctx); err != nil {
		return nil, err
	}
	home := inv.Home()
	var targets []importer.Target
	rep := &importer.Report{}
	found := false
	for _, fm := range inv.Formats {
		roots := fm.Roots(inv.Getenv, home)
		if len(roots) == 0 {
			continue
		}
		targets = append(targets, importer.Target{Format: fm, Roots: roots})
		rep.Tools = append(rep.Tools, &importer.ToolReport{Tool: fm.Tool(), Roots: roots})
		for _, r := range roots {
			if _, err := os.Stat(r); err == nil {
				found = true
			}
		}
	}
	if !found {
		return rep, nil
	}
	st, err := inv.CreateStore(ctx)
	if err != nil {
		return nil, err
	}
	im := &importer.Importer{Store: st, UserID: inv.User(), Now: inv.TimeNow, Price: pricing.Cost, Project: inv.ImportProject}
	rep, err = im.Run(ctx, targets)
	if err != nil {
		return nil, err
	}
	inv.AdoptImported(ctx, st)
	return rep, nil
}

// ImportFile brings in the one session file path of the agent tool, as
// a hook does: incrementally (an unchanged file costs one stat, a grown
// one is read from where the last import stopped). It creates the store
// where there is none yet, unless --db or $LOOM_DB names a missing one.
func ImportFile(ctx context.Context, inv *Invocation, tool, path string) (*importer.Report, error) {
	var format importer.Format
	for _, fm := range inv.Formats {
		if fm.Tool() == tool {
			format = fm
		}
	}
	if format == nil {
		return nil, fmt.Errorf("no importer reads %s", tool)
	}
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%s session file %q is not an absolute path", tool, path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	st, err := inv.CreateStore(ctx)
	if err != nil {
		return nil, err
	}
	im := &importer.Importer{Store: st, UserID: inv.User(), Now: inv.TimeNow, Price: pricing.Cost, Project: inv.ImportProject}
	rep, err := im.Run(ctx, []importer.Target{{Format: format, Roots: []string{filepath.Clean(path)}, Explicit: true}})
	if err != nil {
		return nil, err
	}
	inv.AdoptImported(ctx, st)
	return rep, nil
}
