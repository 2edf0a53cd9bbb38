package report

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// NoProject names the sessions of no project, in every listing.
const NoProject = "(no project)"

// ProjectRef is a project as a listing has it: its id and its name.
type ProjectRef struct{ ID, Name string }

// Rooter says where the sessions of a project ran: an engine's edit
// index (loom.EditStore, which every engine is) is one.
type Rooter interface {
	ProjectRoots(ctx context.Context, userID, projectID string) ([]string, error)
}

// ProjectLabels names the projects of one listing (loom usage, loom
// insights, the dashboard: each calls this) the same way everywhere: a
// project by its name where it is the only one of that name in the
// listing; by its name and where its sessions ran, the home directory
// as ~ ("cli (~/work/a)"), where several share the name, so that three
// repositories named cli are three rows told apart; a project whose
// roots st cannot say (st no Rooter) or that share one by the first 8
// digits of its id. The sessions of no project are NoProject. The map
// is by project id. roots says where a project's sessions ran; nil
// tells projects of one name apart by id alone.
func ProjectLabels(ctx context.Context, roots Rooter, userID string, ps []ProjectRef) map[string]string {
	out := make(map[string]string, len(ps))
	byName := map[string][]string{}
	for _, p := range ps {
		if _, ok := out[p.ID]; ok {
			continue
		}
		if p.ID == "" || p.Name == "" {
			out[p.ID] = NoProject
			continue
		}
		out[p.ID] = p.Name
		byName[p.Name] = append(byName[p.Name], p.ID)
	}
	home, _ := os.UserHomeDir()
	for name, ids := range byName {
		if len(ids) < 2 {
			continue
		}
		seen := map[string]int{}
		for _, id := range ids {
			where := ""
			if roots != nil {
				if dirs, err := roots.ProjectRoots(ctx, userID, id); err == nil && len(dirs) > 0 {
					slices.Sort(dirs)
					where = shortHome(dirs[0], home)
				}
			}
			if where == "" {
				where = id[:min(8, len(id))]
			}
			out[id] = name + " (" + where + ")"
			seen[out[id]]++
		}
		for _, id := range ids {
			if seen[out[id]] > 1 {
				out[id] = strings.TrimSuffix(out[id], ")") + ", " + id[:min(8, len(id))] + ")"
			}
		}
	}
	return out
}

// shortHome writes a path under home from ~.
func shortHome(p, home string) string {
	if home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
		return "~" + string(filepath.Separator) + rest
	}
	return p
}
