package blame

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/blame"
	"github.com/loomhq/loom/cli/command"
	sharecli "github.com/loomhq/loom/cli/share"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/share"
)

func newCmdPR(inv *command.Invocation, runF func(context.Context, *RepoOptions) error) *cobra.Command {
	cmd, opts := repoCommand(inv, &cobra.Command{
		Use:   "pr [BASE..HEAD]",
		Short: "Show who wrote a pull request's added lines, and the sessions behind them",
		Long: `Blame the lines a pull request adds: the commits of BASE..HEAD (the
branch against its upstream by default), each file they added or
changed as HEAD has it, and its lines those commits brought in. Prints
how many are agents', mixed (an agent's line a human changed: half in
every share), humans' and unknown, by agent and by model, the sessions
behind them with their cost, and the files. --markdown writes a pull
request comment's body; --json the same data. The files share git's and
the store's answers as loom blame summary's do, and git blames them on
every core at once. With a team's sessions (every team's on this
machine, or --team NAME's), the lines are counted by member too, and
each session names its member.

--share publishes each session behind the lines as a loom share link
(sealed, through your hub, as loom share does: secrets redacted, the
links listed by loom share list and ended by loom share revoke), and
puts its link beside it. It says what will be shared, then asks; off a
terminal, --yes is required.`,
		Example: `  loom blame pr
  loom blame pr main..feature --markdown > comment.md
  loom blame pr origin/main..HEAD --json | jq '.lines'
  loom blame pr main..feature --team core
  loom blame pr --share --yes --markdown > comment.md`,
	}, func(o *RepoOptions) *string { return &o.Spec }, runF, prRun)
	fl := cmd.Flags()
	fl.BoolVar(&opts.Markdown, "markdown", false, "write a pull request comment's body (Markdown)")
	fl.BoolVar(&opts.Share, "share", false, "publish each session behind the lines as a loom share link, and list the links")
	fl.StringVar(&opts.Expires, "expires", "7d", "with --share: the links stop answering after `WHEN` (a duration or a date)")
	fl.BoolVar(&opts.HidePaths, "hide-paths", false, "with --share: replace home directories, the project root and usernames")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "with --share: publish without asking")
	fl.StringVar(&opts.ShareEnv.Hub, "hub", "", "with --share: the hub's `URL` (default [share] hub, else [sync] hub)")
	fl.StringVar(&opts.ShareEnv.Token, "token", "", "with --share: your `TOKEN` on the hub (default [share] token, else [sync] token)")
	opts.ShareEnv = sharecli.NewEnv(inv)
	return cmd
}

func prRun(ctx context.Context, o *RepoOptions) error {
	b, st, g, _, err := o.repo(ctx, "")
	if err != nil {
		return err
	}
	pr, err := b.PullRequest(ctx, g, o.Spec)
	if err != nil {
		return err
	}
	// The report is made to be passed on (a pull request's comment): the
	// sessions' titles go through the secrets gate.
	var gate *secrets.Detector
	if o.Secrets != nil {
		if gate, err = o.Secrets(); err != nil {
			return err
		}
	}
	for i := range pr.Sessions {
		s := &pr.Sessions[i]
		ses, err := o.storeOf(st, s.SessionID).Session(ctx, s.SessionID)
		if err != nil {
			// Read from the repository's notes or traces alone: its title
			// and cost are not known, which is not a cost of nothing.
			s.NotHeld = true
			pr.NotHeld++
			continue
		}
		s.Title, s.CostUSD = ses.Title, loom.RoundCost(ses.Usage.CostUSD)
		if gate != nil {
			s.Title, _ = gate.Redact(s.Title)
		}
		if !human.CostKnown(ses.Usage) {
			// Tokens counted on a model the price table does not know:
			// its cost is not known, as loom usage says, not nothing.
			s.Unpriced = true
			pr.Unpriced++
			continue
		}
		pr.CostUSD += ses.Usage.CostUSD
	}
	pr.CostUSD = loom.RoundCost(pr.CostUSD)
	if o.Share && len(pr.Sessions) > 0 {
		if err := sharePR(ctx, o, st, gate, pr); err != nil {
			return err
		}
	}
	for _, n := range pr.Notes {
		fmt.Fprintln(o.IO.ErrOut, term.SanitizeLine(n))
	}
	switch {
	case o.JSON:
		return command.WriteJSON(o.IO.Out, pr)
	case o.Markdown:
		writeMarkdown(o.IO.Out, pr)
		return nil
	}
	w, cs := o.IO.Out, o.IO.ColorScheme()
	fmt.Fprintf(w, "%s (%d commits): %s\n", term.SanitizeLine(pr.Range), pr.Commits, prTally(pr, pr.Lines))
	for _, by := range []struct {
		title string
		m     map[string]blame.Tally
	}{{"by agent", pr.ByAgent}, {"by model", pr.ByModel}, {"by member", pr.ByMember}} {
		if len(by.m) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", cs.Bold(by.title))
		for _, k := range byLines(by.m) {
			t := by.m[k]
			fmt.Fprintf(w, "  %-30s %d lines by agents, %d mixed (%.0f%% of the added lines)\n",
				term.SanitizeLine(command.OrDash(k)), t.Agent, t.Mixed, 100*pr.Share(t))
		}
	}
	if len(pr.Sessions) > 0 {
		fmt.Fprintf(w, "\n%s (%s)\n", cs.Bold("sessions"), prCost(pr))
		for _, s := range pr.Sessions {
			printSession(ctx, o.Options, st, s.Sessions)
			if s.NotHeld {
				fmt.Fprintf(w, "    title and cost not known: %s\n", notHeld)
			} else {
				fmt.Fprintf(w, "    %q, %s\n", term.SanitizeLine(s.Title), sessionCost(s))
			}
			if s.Share != "" {
				fmt.Fprintf(w, "    %s\n", term.SanitizeLine(s.Share))
			}
		}
	}
	if len(pr.Files) > 0 {
		fmt.Fprintf(w, "\n%s\n", cs.Bold("files"))
		for _, f := range pr.Files {
			fmt.Fprintf(w, "  %-40s %s\n", term.SanitizeLine(f.Path), prTally(pr, f.Lines))
		}
	}
	return nil
}

// sharePR publishes each session of pr as a share link (Share): each
// is read through the secrets gate, as loom share reads it; what will
// be shared is said first, and asked (off a terminal, --yes is
// required). Nothing is published when any session cannot be built.
func sharePR(ctx context.Context, o *RepoOptions, st loom.Store, gate *secrets.Detector, pr *blame.PR) error {
	env := &o.ShareEnv
	env.User = o.User
	expires, err := sharecli.Expiry(o.Expires, env.Now())
	if err != nil {
		return err
	}
	hc, err := env.Client()
	if err != nil {
		return err
	}
	if gate == nil {
		return loom.Errorf(loom.EINVALID, "no secrets gate to share through: loom blame pr --share redacts every session it shares")
	}
	type built struct {
		p  *share.Payload
		pv *share.Preview
	}
	pages := make([]built, len(pr.Sessions))
	msgs, redacted, paths, n := 0, 0, 0, 0
	for i, ps := range pr.Sessions {
		if t := teamOf(o.Options, ps.SessionID); t != "" {
			// A teammate's session was shared with the team, not with
			// whoever holds a link: only its author may publish it.
			fmt.Fprintf(o.IO.ErrOut, "session %s is a teammate's (team %s): share links are made of your own sessions only; no link for it\n", term.SanitizeLine(ps.SessionID), term.SanitizeLine(t))
			continue
		}
		s, err := st.Session(ctx, ps.SessionID)
		if loom.ErrorCode(err) == loom.ENOTFOUND {
			// Known from a git note or an Agent Trace record alone.
			fmt.Fprintf(o.IO.ErrOut, "session %s is not in this store (its lines were read from the repository's notes or traces): no link for it\n", term.SanitizeLine(ps.SessionID))
			continue
		}
		if err != nil {
			return fmt.Errorf("share session %s: %w", ps.SessionID, err)
		}
		ms, err := st.Messages(ctx, s.ID, loom.MessageQuery{})
		if err != nil {
			return fmt.Errorf("share session %s: %w", ps.SessionID, err)
		}
		p, pv, err := share.Build(s, ms, share.Options{Redact: gate, HidePaths: o.HidePaths, Hider: share.NewHider(s.Project.Root)})
		if err != nil {
			return fmt.Errorf("share session %s: %w", ps.SessionID, err)
		}
		pages[i] = built{p, pv}
		msgs, redacted, paths, n = msgs+pv.Messages, redacted+pv.Redactions, paths+len(pv.Paths)+len(pv.Users), n+1
	}
	if n == 0 {
		return nil
	}
	w := o.IO.ErrWrapped()
	fmt.Fprintf(w, "Sharing %s (%s) through %s until %s. Secrets: redacted %s.\n",
		human.Plural(n, "session"), human.Plural(msgs, "message"), hc.URL, expires.Local().Format("Jan 2, 2006 15:04 MST"), human.Plural(redacted, "secret"))
	if paths > 0 && !o.HidePaths {
		fmt.Fprintf(w, "Absolute paths and usernames: %d (--hide-paths replaces home directories, the project root and usernames).\n", paths)
	}
	if err := sharecli.Ask(ctx, o.IO, o.Yes, "Publish these links?"); err != nil {
		return err
	}
	for i := range pr.Sessions {
		if pages[i].p == nil {
			continue
		}
		rec, err := env.Publish(ctx, hc, pr.Sessions[i].SessionID, pages[i].p, expires)
		if err != nil {
			return err
		}
		pr.Sessions[i].Share = rec.Link
	}
	return nil
}

// prCost says what the sessions behind a pull request cost, as far as
// it is known.
func prCost(pr *blame.PR) string {
	switch {
	case pr.NotHeld == 0 && pr.Unpriced == 0:
		return fmt.Sprintf("cost $%.2f", pr.CostUSD)
	case pr.NotHeld == len(pr.Sessions):
		return "cost not known: " + notHeldAll
	case pr.Unpriced == len(pr.Sessions):
		return "cost " + human.UnknownCost + ": " + unpricedAll
	}
	return fmt.Sprintf("cost $%.2f for %d of them, not known for %s", pr.CostUSD, len(pr.Sessions)-pr.NotHeld-pr.Unpriced, unknownCosts(pr))
}

// sessionCost is a held session's cost: its dollars, or "—" for a
// model with no known price, as loom usage writes it.
func sessionCost(s blame.PRSession) string {
	if s.Unpriced {
		return human.UnknownCost
	}
	return fmt.Sprintf("$%.2f", s.CostUSD)
}

// unknownCosts says which sessions' cost is not known, and why.
func unknownCosts(pr *blame.PR) string {
	var why []string
	if pr.Unpriced > 0 {
		why = append(why, fmt.Sprintf("the %d whose model has no known price", pr.Unpriced))
	}
	if pr.NotHeld > 0 {
		why = append(why, fmt.Sprintf("the %d %s", pr.NotHeld, readFrom))
	}
	return strings.Join(why, " and ")
}

// The words of a session's cost that is not known.
const (
	readFrom    = "read from the repository's git notes or Agent Trace records"
	notHeld     = "the session is not in this store, its lines were " + readFrom
	notHeldAll  = "no session is in this store, their lines were " + readFrom
	unpricedAll = "their models have no known price (tokens counted, cost unknown; add prices in config.toml [prices])"
)

// byLines are the keys of m, most agents' lines first.
func byLines(m map[string]blame.Tally) []string {
	return slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b].Agent+m[b].Mixed, m[a].Agent+m[a].Mixed), strings.Compare(a, b))
	})
}

// prTally says how many of a pull request's added lines t counts, and
// their share of all of them.
func prTally(pr *blame.PR, t blame.Tally) string {
	return fmt.Sprintf("%d lines added: %d by agents, %d mixed, %d by humans, %d unknown (%.0f%% agents)",
		t.Total, t.Agent, t.Mixed, t.Human, t.Unknown, 100*pr.Share(t))
}

// writeMarkdown writes a pull request comment's body.
func writeMarkdown(w io.Writer, pr *blame.PR) {
	md := strings.NewReplacer("|", "\\|", "\n", " ", "`", "'")
	fmt.Fprintf(w, "### Who wrote this change\n\n")
	fmt.Fprintf(w, "**%.0f%%** of the %d lines added by %d commits were written by agents", 100*pr.Share(pr.Lines), pr.Lines.Total, pr.Commits)
	if pr.Lines.Mixed > 0 {
		fmt.Fprintf(w, " (mixed lines, an agent's changed by a human, count half)")
	}
	fmt.Fprintf(w, ".\n\n| | lines | share |\n|---|---:|---:|\n")
	row := func(name string, n int, share float64) {
		fmt.Fprintf(w, "| %s | %d | %.0f%% |\n", md.Replace(name), n, 100*share)
	}
	total := float64(max(1, pr.Lines.Total))
	row("agents", pr.Lines.Agent, float64(pr.Lines.Agent)/total)
	row("mixed", pr.Lines.Mixed, float64(pr.Lines.Mixed)/total)
	row("humans", pr.Lines.Human, float64(pr.Lines.Human)/total)
	row("unknown", pr.Lines.Unknown, float64(pr.Lines.Unknown)/total)
	for _, by := range []struct {
		title string
		m     map[string]blame.Tally
	}{{"agent", pr.ByAgent}, {"model", pr.ByModel}, {"member", pr.ByMember}} {
		if len(by.m) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n| %s | lines | mixed | share |\n|---|---:|---:|---:|\n", by.title)
		for _, k := range byLines(by.m) {
			t := by.m[k]
			fmt.Fprintf(w, "| %s | %d | %d | %.0f%% |\n", md.Replace(cmp.Or(k, "-")), t.Agent, t.Mixed, 100*pr.Share(t))
		}
	}
	if len(pr.Sessions) > 0 {
		fmt.Fprintf(w, "\n| session | agent | model | lines | cost |\n|---|---|---|---:|---:|\n")
		for _, s := range pr.Sessions {
			name := s.SessionID
			if s.Title != "" {
				name += " " + s.Title
			}
			if s.Member != "" {
				name += " (@" + s.Member + ")"
			}
			if s.Share != "" {
				name = "[" + name + "](" + s.Share + ")"
			}
			cost := sessionCost(s)
			if s.NotHeld {
				cost = "not known"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s |\n", md.Replace(name), md.Replace(s.Agent), md.Replace(s.Model), s.Lines+s.Mixed, cost)
		}
		switch {
		case pr.NotHeld == 0 && pr.Unpriced == 0:
			fmt.Fprintf(w, "\nThe sessions cost $%.2f in all.\n", pr.CostUSD)
		case pr.NotHeld == len(pr.Sessions):
			fmt.Fprintf(w, "\nThe sessions' cost is not known: %s.\n", notHeldAll)
		case pr.Unpriced == len(pr.Sessions):
			fmt.Fprintf(w, "\nThe sessions' cost is not known: %s.\n", unpricedAll)
		default:
			fmt.Fprintf(w, "\nThe cost of %d of the sessions is $%.2f; not known for %s.\n",
				len(pr.Sessions)-pr.NotHeld-pr.Unpriced, pr.CostUSD, unknownCosts(pr))
		}
	}
	fmt.Fprintf(w, "\n<sub>loom blame pr %s</sub>\n", md.Replace(pr.Range))
}
