// Package search is loom search: the messages of the user's sessions
// that match a query.
package search

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/semantic"
)

// Options are the options of `loom search`.
type Options struct {
	IO *term.IOStreams
	// ReadStore opens the store to read.
	ReadStore func(context.Context) (loom.Engine, error)
	// Resolve finds the session a reference names.
	Resolve func(ctx context.Context, st loom.Reader, ref string) (*loom.Session, error)
	// ScopeProject is the project searched: nil for every project.
	ScopeProject func(all bool) *loom.Project
	// RefLen is how much of ids a terminal shows.
	RefLen func(ctx context.Context, st loom.Store, ids []string) int
	Now    func() time.Time
	User   string
	JSON   bool

	Query       string
	SessionRef  string
	Project     bool
	AllProjects bool
	Surface     string
	Role        string
	Limit       int
	Raw         bool
	// Exact keeps to messages that hold every word (--exact).
	Exact    bool
	Archived bool
	// Semantic and Keyword force one ranking (--semantic, --keyword);
	// with neither, keyword and meaning are fused where an embeddings
	// endpoint is at hand.
	Semantic bool
	Keyword  bool
	// Searcher returns the searcher of a store.
	Searcher func(ctx context.Context, st loom.Engine) *semantic.Searcher
}

// NewCmdSearch builds loom search. runF, when not nil, is called with
// the options instead of running the command (for tests).
func NewCmdSearch(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO:           inv.IO,
		ReadStore:    inv.ReadStore,
		Resolve:      inv.Scope().Resolve,
		ScopeProject: inv.Scope().ScopeProject,
		RefLen:       inv.Scope().RefLen,
		Now:          inv.TimeNow,
		Searcher:     command.EmbeddingsOf(inv.Factory).Searcher,
	}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the messages of your sessions",
		Long: `Search message text, reasoning and tool inputs and outputs of your
sessions, best matches first: this project's by default (the git
top-level directory, or the working directory outside git), every
project's with --all-projects, one session's with --session. Where no
project can be found (a working directory that is gone), every project
is searched. --team searches what a team shares instead of your own
sessions: every project it shares, from any directory; --team alone
names your only team (docs/team.md).

Messages holding every word come first; when they are fewer than
--limit, the page fills up with word forms, session titles, some of the
words (rarer ones first), then prefixes and typos, each hit saying how
it matched (--exact keeps to every word). A "quoted part" must appear
as a phrase. Anything
else — AND, OR, NEAR, *, -, :, a lone quote — is ordinary text, never a
syntax error. --raw passes the query to the store's own search syntax
(SQLite FTS5 or PostgreSQL tsquery). Archived sessions are left out
unless --archived (or --session names one).

Where an embeddings endpoint is at hand ([embeddings] in config.toml, or
Ollama with nomic-embed-text), hits are ranked by keywords and by meaning
together (reciprocal rank fusion); --keyword or --semantic forces one.
Messages are embedded by loom serve and loom embed (see docs/search.md).`,
		Example: `  loom search flaky test
  loom search '"connection refused" postgres' --all-projects
  loom search retry --session 0196a3b2 --role assistant
  loom search 'tok* NEAR(retry backoff)' --raw
  loom search 'which chats are still running' --semantic
  loom search --team flaky deploy          # every project your only team shares
  loom search --team core flaky deploy     # team core's, of several
  loom search deploy --json | jq -r '.[].session_id'`,
		Args: command.ArgsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = strings.Join(args, " ")
			if strings.TrimSpace(opts.Query) == "" {
				return command.UsageErrorf("the query is empty; usage: %s", cmd.UseLine())
			}
			if opts.Project && opts.AllProjects {
				return command.UsageErrorf("--project and --all-projects cannot be used together")
			}
			if opts.Role != "" && !loom.ValidRole(opts.Role) {
				return command.UsageErrorf("unknown role %q: use user, assistant, tool, system or summary", opts.Role)
			}
			if opts.Semantic && opts.Keyword {
				return command.UsageErrorf("--semantic and --keyword cannot be used together")
			}
			if opts.Semantic && (opts.Raw || opts.Exact) {
				return command.UsageErrorf("--semantic ranks by meaning: it cannot be used with --raw or --exact")
			}
			if opts.Limit < 1 {
				return command.UsageErrorf("--limit must be 1 or more")
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return searchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.SessionRef, "session", "s", "", "search only this session")
	cmd.Flags().BoolVarP(&opts.AllProjects, "all-projects", "a", false, "search every project and surface")
	// This project's sessions are searched by default; -p, which once
	// asked for that, is still accepted.
	cmd.Flags().BoolVarP(&opts.Project, "project", "p", false, "search only this project's sessions (the default)")
	cmd.Flags().MarkHidden("project")
	cmd.Flags().StringVar(&opts.Surface, "surface", "", "search only sessions of this surface")
	cmd.Flags().StringVar(&opts.Role, "role", "", "search only messages of this role")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "L", 20, "most results to show")
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "pass the query to the store's search syntax")
	cmd.Flags().BoolVar(&opts.Exact, "exact", false, "only messages that hold every word: no other tiers")
	cmd.Flags().BoolVar(&opts.Archived, "archived", false, "search archived sessions too")
	cmd.Flags().BoolVar(&opts.Semantic, "semantic", false, "rank by meaning only (needs an embeddings endpoint)")
	cmd.Flags().BoolVar(&opts.Keyword, "keyword", false, "rank by keywords only, not by meaning")
	inv.AddTeamFlag(cmd)
	return cmd
}

func searchRun(ctx context.Context, opts *Options) error {
	ios := opts.IO
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return err
	}
	q := loom.SearchQuery{
		Text:    opts.Query,
		Raw:     opts.Raw,
		Exact:   opts.Exact,
		UserID:  opts.User,
		Surface: opts.Surface,
		Role:    opts.Role,
		Limit:   opts.Limit,

		Archived: opts.Archived,
	}
	if !opts.JSON {
		command.MarkForTerminal(ios, &q)
	}
	if opts.SessionRef != "" {
		s, err := opts.Resolve(ctx, st, opts.SessionRef)
		if err != nil {
			return err
		}
		q.SessionID = s.ID
	}
	// A session named is searched wherever it is.
	project := opts.ScopeProject(opts.AllProjects || opts.SessionRef != "")
	if project != nil {
		q.ProjectID = project.ID
	}
	mode := semantic.Fused
	switch {
	case opts.Keyword || opts.Exact:
		mode = semantic.Keyword
	case opts.Semantic:
		mode = semantic.Meaning
	}
	res, err := opts.Searcher(ctx, st).Search(ctx, q, mode)
	if err != nil {
		return err
	}
	if res.Note != "" {
		fmt.Fprintln(ios.ErrOut, res.Note)
	}
	hits := res.Hits
	if len(hits) == 0 {
		if err := command.CheckSurface(ctx, st, opts.User, opts.Surface); err != nil {
			return err
		}
		elsewhere, err := command.MatchesElsewhere(ctx, st, q)
		if err != nil {
			return err
		}
		switch {
		case elsewhere:
			// Also with --json, whose output stays [] for scripts.
			fmt.Fprintf(ios.ErrOut, "No messages match %q in project %s (%s); %s searches every project.\n",
				opts.Query, term.SanitizeLine(project.Name), term.SanitizeLine(project.Root), term.SanitizeLine(widerSearch(opts)))
		case !opts.JSON && ios.IsStdoutTTY():
			fmt.Fprintf(ios.ErrOut, "No messages match %q.\n", opts.Query)
		}
	}
	if loom.Partial(hits) {
		// Also with --json, whose hits say "partial": true.
		fmt.Fprintln(ios.ErrOut, command.PartialNote)
	}
	if res.Closest {
		// Also with --json, whose hits say their "tier".
		fmt.Fprintf(ios.ErrOut, "No message holds every word of %q; these come closest, each saying how it matched (word forms, title, some words, prefix or typo).\n", opts.Query)
	}
	if opts.JSON {
		if hits == nil {
			hits = []loom.SearchHit{}
		}
		return command.WriteJSON(ios.Out, hits)
	}
	if len(hits) == 0 {
		return nil
	}
	return command.WriteHits(ios, hits, opts.Now(), opts.RefLen(ctx, st, command.HitSessions(hits)))
}

// widerSearch is the command line of the search opts describes over
// every project.
func widerSearch(opts *Options) string {
	args := []string{"loom", "search", "-a"}
	if opts.Surface != "" {
		args = append(args, "--surface", command.ShellQuote(opts.Surface))
	}
	if opts.Role != "" {
		args = append(args, "--role", opts.Role)
	}
	if opts.Archived {
		args = append(args, "--archived")
	}
	if opts.Raw {
		args = append(args, "--raw")
	}
	if strings.HasPrefix(opts.Query, "-") {
		args = append(args, "--")
	}
	return strings.Join(append(args, command.ShellQuote(opts.Query)), " ")
}
