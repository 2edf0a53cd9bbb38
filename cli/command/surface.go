package command

import (
	"context"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// builtinSurfaces are the surfaces loom itself writes sessions from,
// known before any session has one.
var builtinSurfaces = []string{"cli", "http"}

// CheckSurface refuses a --surface that no session of the user has and
// loom does not write or import, with the surfaces there are: a typo would
// otherwise read as "no sessions". It is asked when a filtered list came
// back empty, so a list that found something costs nothing more.
func CheckSurface(ctx context.Context, st loom.Store, user, surface string) error {
	if surface == "" || slices.Contains(builtinSurfaces, surface) {
		return nil
	}
	// An agent loom imports is a surface before its first session.
	for _, f := range importer.Registered() {
		if f.Tool() == surface {
			return nil
		}
	}
	all, err := st.Summaries(ctx, loom.SessionFilter{UserID: user, Archived: loom.WithArchived})
	if err != nil {
		return err
	}
	known := slices.Clone(builtinSurfaces)
	for _, s := range all {
		if s.Surface == surface {
			return nil
		}
		if s.Surface != "" && !slices.Contains(known, s.Surface) {
			known = append(known, s.Surface)
		}
	}
	slices.Sort(known)
	return UsageErrorf("--surface %q: no session has it; the surfaces are %s", surface, strings.Join(known, ", "))
}
