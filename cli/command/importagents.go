package command

import (
	"context"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/pricing"
)

// ImportAgents brings in what every agent with a location of its own
// wrote since the last import, as `loom session import --from all` does
// (incremental and safe beside other importers: a file that did not
// change costs one stat), for the reports that count from the store.
func (f *Factory) ImportAgents(ctx context.Context) (*importer.Report, error) {
	st, err := f.CreateStore(ctx)
	if err != nil {
		return nil, err
	}
	home := f.Home()
	var targets []importer.Target
	for _, fm := range f.Formats {
		if roots := fm.Roots(f.Getenv, home); len(roots) > 0 {
			targets = append(targets, importer.Target{Format: fm, Roots: roots})
		}
	}
	im := &importer.Importer{Store: st, UserID: f.User(), Now: f.TimeNow, Price: pricing.Cost, Project: f.ImportProject}
	rep, err := im.Run(ctx, targets)
	if err != nil {
		return nil, err
	}
	f.AdoptImported(ctx, st)
	return rep, nil
}
