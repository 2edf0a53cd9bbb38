package session

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// ListOptions are the options of `loom session list`.
type ListOptions struct {
	IO *term.IOStreams
	// ReadStore opens the store to read.
	ReadStore func(context.Context) (loom.Engine, error)
	// ScopeProject is the project listed: nil for every project.
	ScopeProject func(all bool) *loom.Project
	// PrintMovedProjectHint says where this project's sessions went when
	// its directory moved.
	PrintMovedProjectHint func(ctx context.Context, st loom.Store, project loom.Project) error
	// RefLen is how much of ids a terminal shows.
	RefLen func(ctx context.Context, st loom.Store, ids []string) int
	Now    func() time.Time
	User   string
	JSON   bool

	AllProjects bool
	Surface     string
	Branch      string
	Archived    bool
	Deleted     bool
	Tree        bool
	Limit       int
}

func newCmdSessionList(inv *command.Invocation, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{
		IO:           inv.IO,
		ReadStore:    inv.ReadStore,
		ScopeProject: inv.Scope().ScopeProject,
		PrintMovedProjectHint: func(ctx context.Context, st loom.Store, project loom.Project) error {
			return command.PrintMovedProjectHint(ctx, inv.IO, inv.User(), st, project)
		},
		RefLen: inv.Scope().RefLen,
		Now:    inv.TimeNow,
	}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List sessions, newest first",
		Long: fmt.Sprintf(`List sessions, most recently active first: this project's by default
(the git top-level directory, or the working directory outside git),
every project's with --all-projects. Where no project can be found (a
working directory that is gone), every project is listed.

On a terminal ids are shortened to 8 characters, or more where another of
your sessions shares them, so that a shown id works as a reference and times are shown as ages; when the output is
piped, rows are tab-separated with full ids and RFC 3339 times. On a
terminal a BRANCH column shows the git branch the sessions were on, when
any was.

Archived sessions are left out; --archived lists them instead. --deleted
lists the trash (archived or not): sessions deleted in the last %d days,
newest activity first, that loom session restore brings back.`, int(loom.TrashTTL/(24*time.Hour))),
		Example: `  loom session list
  loom session list --all-projects --limit 50
  loom session list --surface telegram
  loom session list --tree
  loom session list --branch main
  loom session list --archived
  loom session list --deleted
  loom session list --team        # the sessions your only team shares
  loom session list --json | jq -r '.[].id'`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Limit < 0 {
				return command.UsageErrorf("--limit must be 0 (no limit) or more")
			}
			if opts.Deleted && (opts.Archived || opts.Tree) {
				return command.UsageErrorf("--deleted lists the whole trash: it does not go with --archived or --tree")
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.AllProjects, "all-projects", "a", false, "list the sessions of every project and surface")
	cmd.Flags().StringVar(&opts.Surface, "surface", "", "only sessions of this surface (cli, http, telegram, …)")
	cmd.Flags().StringVar(&opts.Branch, "branch", "", "only sessions whose work was on this git branch")
	cmd.Flags().BoolVar(&opts.Archived, "archived", false, "list the archived sessions instead")
	cmd.Flags().BoolVar(&opts.Deleted, "deleted", false, "list the trash instead: sessions loom session restore brings back")
	cmd.Flags().BoolVar(&opts.Tree, "tree", false, "show lineage: forks and sub-agent sessions under their parents")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "L", 20, "most sessions to list (0: all)")
	inv.AddTeamFlag(cmd)
	return cmd
}

// TreeRow is a session and its depth in the lineage tree, with the
// lines that draw its branch ("│ ├ ").
type TreeRow struct {
	S      *loom.Session
	Depth  int
	Branch string
}

// DrawBranches sets the branch of each row of a tree in depth-first
// order: "├ " before a child with siblings after it, "└ " before the
// last, and under them "│ " where an ancestor's siblings follow.
func DrawBranches(rows []TreeRow) {
	// more reports whether a row at depth d follows row i among its
	// siblings, before the tree climbs above d.
	more := func(i, d int) bool {
		for _, r := range rows[i+1:] {
			if r.Depth < d {
				return false
			}
			if r.Depth == d {
				return true
			}
		}
		return false
	}
	var open []bool // open[k]: the ancestor at depth k+1 has siblings after it
	for i := range rows {
		d := rows[i].Depth
		if d == 0 {
			open = open[:0]
			continue
		}
		open = append(open[:min(len(open), d-1)], more(i, d))
		var b strings.Builder
		for _, o := range open[:d-1] {
			if o {
				b.WriteString("│ ")
			} else {
				b.WriteString("  ")
			}
		}
		if open[d-1] {
			b.WriteString("├ ")
		} else {
			b.WriteString("└ ")
		}
		rows[i].Branch = b.String()
	}
}

func listRun(ctx context.Context, opts *ListOptions) error {
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	filter := loom.SessionFilter{UserID: opts.User, Surface: opts.Surface, GitBranch: opts.Branch, Limit: opts.Limit}
	if opts.Archived {
		filter.Archived = loom.OnlyArchived
	}
	if opts.Deleted {
		filter.Deleted, filter.Archived = true, loom.WithArchived
	}
	project := opts.ScopeProject(opts.AllProjects)
	if project != nil {
		filter.ProjectID = project.ID
	}
	sessions, err := st.Sessions(ctx, filter)
	if err != nil {
		return err
	}
	if len(sessions) == 0 {
		if err := command.CheckSurface(ctx, st, opts.User, opts.Surface); err != nil {
			return err
		}
	}
	rows, err := listRows(ctx, opts, st, sessions, project == nil)
	if err != nil {
		return err
	}
	ios := opts.IO
	elsewhere := false
	if len(rows) == 0 && project != nil && opts.Branch == "" && !opts.Archived && !opts.Deleted {
		if elsewhere, err = listElsewhere(ctx, opts, st, filter, project); err != nil {
			return err
		}
	}
	if opts.JSON {
		out := make([]*loom.Session, 0, len(rows))
		for _, r := range rows {
			out = append(out, r.S)
		}
		return command.WriteJSON(ios.Out, out)
	}
	if len(rows) == 0 {
		return listNone(ctx, opts, st, project, elsewhere)
	}
	if err := writeListTable(ctx, opts, st, rows); err != nil {
		return err
	}
	return listFooter(ctx, st, ios, filter, len(sessions))
}

// listRows are the rows of the list of sessions: on a terminal a
// sub-agent's session under the session that ran it, with --tree the
// lineage of each. allProjects is whether the list is of every
// project's sessions.
func listRows(ctx context.Context, opts *ListOptions, st loom.Store, sessions []*loom.Session, allProjects bool) ([]TreeRow, error) {
	rows := make([]TreeRow, len(sessions))
	for i, s := range sessions {
		rows[i] = TreeRow{S: s}
	}
	if !opts.Tree && opts.IO.IsStdoutTTY() && !opts.JSON {
		// On a terminal a sub-agent's session stands under the session
		// that ran it; piped rows keep the store's order for scripts.
		for i, n := range loom.NestSubagents(sessions) {
			rows[i] = TreeRow{S: n.S, Depth: n.Depth}
		}
		DrawBranches(rows)
	}
	if !opts.Tree {
		return rows, nil
	}
	// A list of every project and surface that the limit did not cut
	// holds every session a tree could show: no query is needed.
	complete := allProjects && opts.Surface == "" && opts.Branch == "" && !opts.Archived && (opts.Limit == 0 || len(sessions) < opts.Limit)
	return lineage(ctx, st, opts.User, sessions, complete, opts.Archived)
}

// listElsewhere reports whether other projects have sessions that
// filter would list, and then says on stderr which command lists them
// (also with --json, whose output stays [] for scripts).
func listElsewhere(ctx context.Context, opts *ListOptions, st loom.Store, filter loom.SessionFilter, project *loom.Project) (bool, error) {
	wide := filter
	wide.ProjectID, wide.Limit = "", 1
	others, err := st.Sessions(ctx, wide)
	if err != nil {
		return false, err
	}
	if len(others) == 0 {
		return false, nil
	}
	wider := "loom session list -a"
	if opts.Surface != "" {
		wider += " --surface " + command.ShellQuote(opts.Surface)
	}
	fmt.Fprintf(opts.IO.ErrOut, "No sessions in project %s (%s); %s lists every project's.\n",
		term.SanitizeLine(project.Name), term.SanitizeLine(project.Root), term.SanitizeLine(wider))
	return true, nil
}

// listNone says on a terminal that the list is empty, and why, and
// whether the project moved.
func listNone(ctx context.Context, opts *ListOptions, st loom.Store, project *loom.Project, elsewhere bool) error {
	ios := opts.IO
	if ios.IsStdoutTTY() {
		switch {
		case opts.Archived:
			fmt.Fprintln(ios.ErrOut, "No archived sessions here.")
		case opts.Deleted:
			fmt.Fprintln(ios.ErrOut, "The trash is empty here.")
		case opts.Branch != "":
			fmt.Fprintf(ios.ErrOut, "No sessions on branch %s here.\n", opts.Branch)
		case !elsewhere:
			fmt.Fprintln(ios.ErrOut, "No sessions yet.")
		}
	}
	if project != nil && opts.Surface == "" && opts.Branch == "" && !opts.Archived && !opts.Deleted {
		return opts.PrintMovedProjectHint(ctx, st, *project)
	}
	return nil
}

// writeListTable writes the table of rows.
func writeListTable(ctx context.Context, opts *ListOptions, st loom.Store, rows []TreeRow) error {
	ios := opts.IO
	now := opts.Now()
	cs := ios.ColorScheme()
	tp := term.NewTable(ios)
	// The branch is a terminal column, shown when a session has one:
	// piped rows keep every field of docs/formats.md.
	branches := false
	for _, r := range rows {
		branches = branches || r.S.GitBranch != ""
	}
	branches = branches && ios.IsStdoutTTY()
	if branches {
		tp.Header("ID", "TITLE", "KEY", "BRANCH", "CREATED", "UPDATED", "MSGS", "LAST PROMPT")
		// The key is cut first: the last prompt says more about a
		// session than the rest of a long key does.
		tp.Flex(2, 7, 3, 1)
		tp.Prose(1, 7)
		tp.Keys(2)
		tp.Drop(4, 3, 2, 7, 6)
	} else {
		tp.Header("ID", "TITLE", "KEY", "CREATED", "UPDATED", "MSGS", "LAST PROMPT")
		tp.Flex(2, 6, 1)
		tp.Prose(1, 6)
		tp.Keys(2)
		// On a narrow terminal: created, key, then last prompt and the
		// count go first; id, title and last activity stay.
		tp.Drop(3, 2, 6, 5)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.S.ID
	}
	idLen := opts.RefLen(ctx, st, ids)
	for _, r := range rows {
		s := r.S
		title := s.Title
		if r.Depth > 0 {
			title = r.Branch + treeTitle(s)
		}
		titleColor := cs.Bold
		if title == "" && ios.IsStdoutTTY() {
			title, titleColor = "(untitled)", cs.Gray
		}
		tp.AddField(term.AbbrevID(ios, s.ID, idLen), cs.Cyan)
		tp.AddField(title, titleColor)
		tp.AddField(loom.ShownKey(s.Key, s.Member), cs.Gray)
		if branches {
			tp.AddField(s.GitBranch, cs.Gray)
		}
		tp.AddField(term.DisplayTime(ios, s.CreatedAt, now), cs.Gray)
		tp.AddField(term.DisplayTime(ios, s.UpdatedAt, now), nil)
		tp.AddField(strconv.Itoa(s.MessageCount), nil)
		tp.AddField(human.FirstLine(s.LastPrompt), nil)
		tp.EndRow()
	}
	return tp.Render()
}

// listFooter says on a terminal how many sessions a list with a limit
// left out, as usage does: "… and 27 more (--limit 0 lists all)". Piped
// and --json output is the rows alone.
func listFooter(ctx context.Context, st loom.Store, ios *term.IOStreams, filter loom.SessionFilter, listed int) error {
	if !ios.IsStdoutTTY() || filter.Limit == 0 || listed < filter.Limit {
		return nil
	}
	filter.Limit = 0
	all, err := st.Summaries(ctx, filter)
	if err != nil {
		return err
	}
	command.WriteMore(ios, len(all)-listed)
	return nil
}

// lineage orders sessions as a tree: each listed session that is not the
// child of another listed one is a root, followed by its forks and
// sub-agent sessions (listed or not), depth first. The whole tree is one
// store query, however many sessions it holds, and none when complete
// says the list already holds every live session of the user. Archived
// relatives are left out unless archived (the list of --archived).
func lineage(ctx context.Context, st loom.Store, user string, sessions []*loom.Session, complete, archived bool) ([]TreeRow, error) {
	listed := make(map[string]bool, len(sessions))
	for _, s := range sessions {
		listed[s.ID] = true
	}
	var roots []string
	for _, s := range sessions {
		if s.ParentID == "" || !listed[s.ParentID] {
			roots = append(roots, s.ID)
		}
	}
	q := loom.FamilyQuery{IDs: roots, UserID: user}
	var family []*loom.Session
	if complete {
		family = loom.ArrangeFamily(q, sessions)
	} else {
		var err error
		if family, err = st.Family(ctx, q); err != nil {
			return nil, err
		}
	}
	// Family puts each session after its parent, so a parent's depth is
	// known when its children come.
	depth := make(map[string]int, len(family))
	rows := make([]TreeRow, 0, len(family))
	for _, s := range family {
		if s.ArchivedAt != nil && !archived {
			continue
		}
		d := 0
		if pd, ok := depth[s.ParentID]; ok && s.ParentID != "" {
			d = pd + 1
		}
		depth[s.ID] = d
		rows = append(rows, TreeRow{S: s, Depth: d})
	}
	DrawBranches(rows)
	return rows, nil
}

// treeTitle is a child's title in a tree, led by what it is: "sub-agent:
// T", and for a fork whose title is the default one the fork's suffix
// moved to the front ("fork 2: plan", "rewound: plan"), so the line says
// fork once.
func treeTitle(s *loom.Session) string {
	if s.Kind == loom.KindSubagent {
		return "sub-agent: " + s.Title
	}
	base, mark := loom.SplitForkTitle(s.Title)
	if mark == "" {
		mark = "fork"
	}
	return mark + ": " + base
}
