package sqlstore

import (
	"fmt"
	"time"

	"github.com/loomhq/loom"
)

// DeleteSteps are an engine's reads and writes of Store.Delete, inside
// its transaction.
type DeleteSteps struct {
	// Family returns the session and its sub-agent sessions, of every
	// generation, with their locks: the live ones, and those in the
	// trash too when purging.
	Family func() ([]*loom.Session, error)
	// EmptyTrash purges the sessions in the trash for longer than
	// TrashTTL.
	EmptyTrash func() error
	// Purge removes the family for good.
	Purge func() error
	// Trash moves the family's live sessions to the trash at at.
	Trash func(at time.Time) error
}

// DeleteWith is Store.Delete of session id at now with an engine's
// steps: the session goes with its sub-agent sessions, unless another
// live holder than owner has one of them (and not opts.Force); trash
// older than TrashTTL is purged at the same time. It returns the
// sessions removed, the session first, then its sub-agent sessions in
// Family order; trashed ones carry their DeletedAt.
func DeleteWith(id string, opts loom.DeleteOptions, owner string, now time.Time, steps DeleteSteps) ([]*loom.Session, error) {
	fam, err := steps.Family()
	if err != nil {
		return nil, fmt.Errorf("delete %s: %w", id, err)
	}
	if !opts.Force {
		if err := loom.CheckNotHeld(fam, owner); err != nil {
			return nil, err
		}
	}
	if err := steps.EmptyTrash(); err != nil {
		return nil, fmt.Errorf("empty trash: %w", err)
	}
	if opts.Purge {
		if err := steps.Purge(); err != nil {
			return nil, fmt.Errorf("delete %s: %w", id, err)
		}
	} else {
		at := now.UTC().Truncate(time.Millisecond)
		if err := steps.Trash(at); err != nil {
			return nil, fmt.Errorf("delete %s: %w", id, err)
		}
		for _, x := range fam {
			x.DeletedAt = &at
		}
	}
	return loom.ArrangeFamily(loom.FamilyQuery{IDs: []string{id}, SubagentsOnly: true}, fam), nil
}

// TrashedBefore is the time before which sessions in the trash at now
// are purged: TrashTTL ago.
func TrashedBefore(now time.Time) time.Time { return now.Add(-loom.TrashTTL) }

// RestoreWith is Store.Restore of x with the engine's write: x must be
// in the trash; restore brings back the sessions of its family that went
// to the trash with it (at the time they were trashed), reporting
// whether a key another live session has taken meanwhile stopped it.
func RestoreWith(x *loom.Session, restore func(trashedAt time.Time) (taken bool, err error)) error {
	if x.DeletedAt == nil {
		return loom.Errorf(loom.EINVALID, "session %s is not in the trash", x.ID)
	}
	switch taken, err := restore(*x.DeletedAt); {
	case taken:
		return loom.Errorf(loom.ECONFLICT, "cannot restore %s: another session now has its key %q", x.ID, x.Key)
	case err != nil:
		return fmt.Errorf("restore %s: %w", x.ID, err)
	}
	return nil
}

// PruneSteps are an engine's reads and writes of Store.Prune, inside its
// transaction.
type PruneSteps struct {
	// Select returns the sessions the prune's options select (see
	// PruneOptions), oldest first, with their locks.
	Select func() ([]*loom.Session, error)
	// EmptyTrash purges the sessions in the trash for longer than
	// TrashTTL.
	EmptyTrash func() error
	// Trash moves sessions, with their sub-agent sessions, to the trash
	// at at.
	Trash func(sessions []*loom.Session, at time.Time) error
}

// PruneWith is Store.Prune at now with an engine's steps: the sessions
// selected go to the trash (so a prune is undone by restore for
// TrashTTL), but for those another live holder than owner has, which are
// skipped; a dry run only reports.
func PruneWith(opts loom.PruneOptions, owner string, now time.Time, steps PruneSteps) (*loom.PruneResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	selected, err := steps.Select()
	if err != nil {
		return nil, fmt.Errorf("prune: %w", err)
	}
	res := SplitPrune(selected, owner)
	if opts.DryRun {
		return res, nil
	}
	if err := steps.EmptyTrash(); err != nil {
		return nil, fmt.Errorf("empty trash: %w", err)
	}
	if len(res.Removed) > 0 {
		if err := steps.Trash(res.Removed, now.UTC().Truncate(time.Millisecond)); err != nil {
			return nil, fmt.Errorf("prune: %w", err)
		}
	}
	return res, nil
}

// SplitPrune sorts the sessions a prune selected into those it removes
// and those it skips, because another live holder than owner has them.
func SplitPrune(selected []*loom.Session, owner string) *loom.PruneResult {
	res := &loom.PruneResult{}
	for _, x := range selected {
		if x.HeldElsewhere(owner) {
			res.Skipped = append(res.Skipped, x)
		} else {
			res.Removed = append(res.Removed, x)
		}
	}
	return res
}
