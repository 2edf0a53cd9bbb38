package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/paths"
)

// AdoptProject moves the sessions user recorded under the path id of
// project's root to project, when project is identified by its
// repository's remote (see paths.DetectProject): sessions made before
// loom identified projects by their remote, or while the work tree had
// none or its config could not be read. Live, archived and trashed
// sessions move; their working directories and updated times stay, so
// lists keep their order and the project its current session. A
// command-line key named after the old project (cli:DIR) follows the
// repository's name; where the project already has that key (a clone
// elsewhere made it), the moved session gets cli:NAME:MS, MS its
// creation time.
//
// When there is nothing to move it costs one query over the live
// sessions of one user and project, on an index: cheap enough for every
// command. So trashed sessions move only along with live ones; one
// restored later is live, and moves at the next command.
//
// The sessions move together, in one transaction
// (loom.ProjectMover): a session that cannot move keeps the others where they
// were, and the error says so.
func AdoptProject(ctx context.Context, st loom.Engine, user string, project loom.Project) (int, error) {
	if project.ID == "" || project.Root == "" || paths.UsesPath(project) {
		return 0, nil
	}
	old := paths.ProjectID(project.Root)
	probe, err := st.Summaries(ctx, loom.SessionFilter{UserID: user, ProjectID: old, Archived: loom.WithArchived, Limit: 1})
	if err != nil || len(probe) == 0 {
		return 0, err
	}
	moved, err := st.MoveProject(ctx, loom.ProjectMove{UserID: user, From: old, To: project, KeepUpdatedAt: true})
	if err != nil {
		return 0, fmt.Errorf("the sessions of %s could not move to the project of its repository: %w", project.Root, err)
	}
	return len(moved), nil
}

// adopt runs AdoptProject for the current user once per project root and
// run, and warns on stderr when sessions could not move: the command
// goes on, and the next one tries again.
func (inv *Invocation) adopt(ctx context.Context, st loom.Engine, project loom.Project) {
	if inv.adopted[project.Root] || paths.UsesPath(project) {
		return
	}
	if inv.adopted == nil {
		inv.adopted = map[string]bool{}
	}
	inv.adopted[project.Root] = true
	if _, err := AdoptProject(ctx, st, inv.User(), project); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(inv.IO.ErrOut, "loom: warning: %s\n", term.SanitizeLine(err.Error()))
	}
}

// adoptHere adopts the working directory's project into st, the store a
// command opened (one that exists): the first command run in a clone,
// after loom began identifying projects by their remote, moves the
// project's older sessions.
func (inv *Invocation) adoptHere(ctx context.Context, st loom.Engine) {
	if p, err := inv.Project(); err == nil {
		inv.adopt(ctx, st, p)
	}
}

// ImportProject is paths.ProjectOf for the importer, remembering the
// projects identified by a remote so that adoptImported moves what
// earlier imports (or loom itself) recorded under their paths.
func (inv *Invocation) ImportProject(dir string) loom.Project {
	p := paths.ProjectOf(dir)
	if !paths.UsesPath(p) && !inv.adopted[p.Root] {
		inv.imported = append(inv.imported, p)
	}
	return p
}

// AdoptImported adopts the projects an import met since the last call,
// and forgets the check behind the sessions-at-risk warning (what loom
// holds may have changed).
func (inv *Invocation) AdoptImported(ctx context.Context, st loom.Engine) {
	for _, p := range inv.imported {
		inv.adopt(ctx, st, p)
	}
	inv.imported = nil
	if d, err := inv.Dirs(); err == nil {
		os.Remove(AtRiskCache(d))
	}
}

// AtRiskCache is the file that keeps the last check behind the
// sessions-at-risk warning of the chat and the status line (package
// doctor's Warner).
func AtRiskCache(d paths.Dirs) string { return filepath.Join(d.Cache, "doctor", "at-risk.json") }
