package importer

import (
	"context"
	"strings"

	"github.com/loomhq/loom"
)

// Repair of stores hit by importers that raced before source files had
// import locks: two importers of one growing file each compared the
// session with the source and appended what they found new, so the
// session got messages twice, its next import took it for a rewound
// one and made a fork keyed SOURCE@ID (then SOURCE@ID@ID …) holding the
// file again, and the file was recorded as read in full while turns
// were missing. With Rescan every file is read again whatever its
// record, and before a file's sessions are compared with it, repair
// puts them back as one import of the file makes them:
//
//   - a fork keyed SOURCE@… that the file does not call for (not one of
//     its abandoned branches) and that holds only messages the file
//     has is removed: what it holds comes back into the session it
//     split from, which grows from the file;
//   - a session that holds its file's messages out of order or twice
//     is made again from the file, under its own id, when everything
//     it and its sub-agent sessions hold is in the file.
//
// Nothing that is not in the file is removed: a fork holding such a
// message stays (and so do the forks it comes from), and a session
// that holds one stays as it is, reported as a problem.

// repair does that for the sessions of res, read from the files of
// recs; a repair that removes anything first marks the files unread
// (a record that matches no file), so that a run stopped in the middle
// leaves them to be read again by any import.
func (im *Importer) repair(ctx context.Context, f Format, res *Result, recs []loom.ImportedFile, tr *ToolReport) error {
	tool := f.Tool()
	inFile := map[string]bool{}
	ours := map[string]bool{}
	for _, s := range res.Sessions {
		ours[tool+":"+s.SourceID] = true
		for _, m := range s.Messages {
			inFile[m.ID] = true
		}
	}
	marked := false
	for _, s := range res.Sessions {
		if s.Kind != "" && s.Kind != loom.KindMain {
			continue
		}
		x, err := im.find(ctx, tool+":"+s.SourceID)
		if err != nil {
			return err
		}
		if x == nil {
			continue
		}
		plan, err := im.repairPlan(ctx, tool, s, x, inFile, ours, tr)
		if err != nil || len(plan.remove) == 0 {
			return err
		}
		tr.SessionsRepaired++
		tr.ForksMerged += plan.forks
		tr.MessagesRemoved += plan.messages
		if im.DryRun {
			continue
		}
		if !marked {
			if err := im.flush(ctx); err != nil {
				return err
			}
			unread := make([]loom.ImportedFile, len(recs))
			for i, r := range recs {
				r.Size = -1
				unread[i] = r
			}
			if err := im.Store.RecordImportedFiles(ctx, unread); err != nil {
				return err
			}
			marked = true
		}
		if plan.remade != "" {
			if im.remade == nil {
				im.remade = map[string]string{}
			}
			im.remade[x.Key] = plan.remade
		}
		for _, id := range plan.remove {
			if _, err := im.Store.Delete(ctx, id, loom.DeleteOptions{Purge: true}); err != nil && loom.ErrorCode(err) != loom.ENOTFOUND {
				return err
			}
		}
	}
	return nil
}

// repairPlan is what a repair removes of the sessions of x's family, x
// the copy of source session s.
type repairPlan struct {
	// remove are the sessions to remove, those below a session before
	// it.
	remove []string
	// forks counts the forks among them that the file does not call
	// for, and messages the messages they and a session made again
	// held.
	forks, messages int
	// remade is the id of the session made again from the file, which
	// it keeps.
	remade string
}

func (im *Importer) repairPlan(ctx context.Context, tool string, s *Session, x *loom.Session, inFile, ours map[string]bool, tr *ToolReport) (*repairPlan, error) {
	fam, err := im.Store.Family(ctx, loom.FamilyQuery{IDs: []string{x.ID}, UserID: im.UserID})
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	// whole says a session holds only messages its file has.
	whole := func(id string) (bool, error) {
		msgs, err := im.Store.Messages(ctx, id, loom.MessageQuery{})
		if err != nil {
			return false, err
		}
		counts[id] = len(msgs)
		for _, m := range msgs {
			if !inFile[m.ID] {
				return false, nil
			}
		}
		return true, nil
	}
	plan := &repairPlan{}
	remove := map[string]bool{}
	kept := map[string]bool{} // sessions below x that stay
	prefix := tool + ":" + s.SourceID + "@"
	// Depth first, those below a session after it: backwards, a
	// session's children come before it.
	for i := len(fam) - 1; i >= 1; i-- {
		y := fam[i]
		stray := y.Source != nil && y.Kind == loom.KindFork && strings.HasPrefix(y.Key, prefix) && !ours[y.Key]
		if stray && !kept[y.ID] {
			ok, err := whole(y.ID)
			if err != nil {
				return nil, err
			}
			if ok {
				remove[y.ID] = true
				plan.remove = append(plan.remove, y.ID)
				plan.forks++
				plan.messages += counts[y.ID]
				continue
			}
		}
		kept[y.ID] = true
		if y.ParentID != "" {
			kept[y.ParentID] = true
		}
	}
	// x itself: whole when it holds the file's messages in order.
	stored, err := im.Store.Messages(ctx, x.ID, loom.MessageQuery{})
	if err != nil {
		return nil, err
	}
	s.keepStoredIDs(stored, s.Messages)
	j := 0
	for j < len(stored) && j < len(s.Messages) && stored[j].ID == s.Messages[j].ID {
		j++
	}
	if j == len(stored) {
		return plan, nil
	}
	for _, m := range stored[j:] {
		if !inFile[m.ID] {
			// Not the race's: the file changed in place, and grow makes
			// a fork of what it has now.
			return plan, nil
		}
	}
	// Made again from the file, under its own id, so that the forks
	// below it that stay still continue it. Its sub-agent sessions go
	// with it, and come again from their files; a session of loom's own
	// that continues it or them (a resumed import) keeps it as it is.
	sub := map[string]bool{x.ID: true}
	for _, y := range fam[1:] {
		if remove[y.ID] {
			continue
		}
		if sub[y.ParentID] && y.Source == nil {
			tr.problem(Problem{File: s.Path, Reason: "session " + x.ID + " holds messages twice or out of order, and is left as it is: session " + y.ID + " continues it"})
			return plan, nil
		}
		if y.Kind != loom.KindSubagent || !sub[y.ParentID] {
			continue
		}
		sub[y.ID] = true
		if ok, err := whole(y.ID); err != nil || !ok {
			if err == nil {
				tr.problem(Problem{File: s.Path, Reason: "session " + x.ID + " holds messages twice or out of order, and is left as it is: its sub-agent session " + y.ID + " holds messages its file does not"})
			}
			return plan, err
		}
	}
	plan.remove = append(plan.remove, x.ID)
	plan.remade = x.ID
	plan.messages += len(stored) - j
	return plan, nil
}
