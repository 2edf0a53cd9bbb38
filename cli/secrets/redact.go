package secrets

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	sec "github.com/loomhq/loom/secrets"
)

// RedactReport is the JSON shape of `loom secrets redact --json`.
type RedactReport struct {
	DryRun  bool `json:"dry_run"`
	Secrets int  `json:"secrets"`
	// Echoes counts, of Secrets, the repeats of secrets the detector
	// found elsewhere in the session or the store, replaced where no
	// rule sees them.
	Echoes   int                `json:"echoes"`
	Parts    int                `json:"parts"`
	Sessions []*SessionFindings `json:"sessions"`
	// Skipped are sessions another live process was writing; they were
	// left as they were.
	Skipped []string `json:"skipped"`
}

// newCmdRedact builds `loom secrets redact`. runF, when not nil, is
// called with the options instead of running the command (for tests).
func newCmdRedact(inv *command.Invocation, runF func(*RedactOptions) error) *cobra.Command {
	opts := &RedactOptions{Common: commonOf(inv), Store: inv.Store}
	cmd := &cobra.Command{
		Use:   "redact [SESSION]",
		Short: "Replace the secrets in stored sessions with [REDACTED:rule] markers",
		Long: `Replace every secret that loom secrets scan reports, in the stored messages
themselves, with a marker naming the rule that found it
([REDACTED:aws-access-key]). Without SESSION, every session of the user.

The original text is gone from the messages, the search index and the
store's files: on SQLite the file is rewritten (VACUUM), its write-ahead
log emptied, and this machine's sync log rewritten with the same markers;
on PostgreSQL the tables are rewritten (VACUUM FULL, which locks each
while it runs). The replay logs of the sessions redacted in loom's state
directory are rewritten too, and without SESSION the chat history. The change is recorded for sync: every
machine that runs loom sync redacts too, and scrubs its own files. Still
holding the secrets: a JSON export or backup made earlier, the hub's
copies of earlier records (ciphertext under the sync key), and
PostgreSQL's own write-ahead log. See docs/security.md.

It says what it will replace and asks first on a terminal; elsewhere
--yes is required. --dry-run only reports. A session another process is
writing is skipped and named.`,
		Example: `  loom secrets redact --dry-run
  loom secrets redact 0196a3b2
  loom secrets redact --yes
  loom secrets redact --dry-run --json`,
		Args: command.ArgsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !opts.Yes && !opts.DryRun && !opts.IO.CanPrompt() {
				return command.UsageErrorf("--yes (or --dry-run) is required to redact when not on a terminal")
			}
			if len(args) == 1 {
				opts.Ref = args[0]
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return redactRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "report what would be replaced, change nothing")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask first")
	return cmd
}

func redactRun(ctx context.Context, opts *RedactOptions) error {
	dryRun := opts.DryRun
	d, err := opts.Detector()
	if err != nil {
		return err
	}
	open := opts.Store
	if dryRun {
		open = opts.ReadStore
	}
	st, err := open(ctx)
	if err != nil {
		return err
	}
	sessions, err := sessionScope(ctx, &opts.Common, st, opts.Ref)
	if err != nil {
		return err
	}
	rep := &RedactReport{DryRun: dryRun, Sessions: []*SessionFindings{}, Skipped: []string{}}
	todo, plans, looked, run, err := planRun(ctx, st, d, opts.User, sessions)
	if err != nil {
		return err
	}
	reportPlans(rep, todo, plans, run)
	if dryRun {
		return finishRedact(&opts.Common, rep)
	}
	if rep.Secrets == 0 {
		// The messages hold none, but copies made before may (a
		// redaction stopped before its end, one that arrived by sync).
		if err := afterRedact(ctx, opts, st, run.Redactor(), newScope(opts.Ref, looked, nil), false); err != nil {
			return err
		}
		return finishRedact(&opts.Common, rep)
	}
	if err := confirmRedact(ctx, opts, rep); err != nil {
		return err
	}
	if err := beforeRedact(ctx, st); err != nil {
		return err
	}
	if err := redactPlanned(ctx, opts.IO, st, d, todo, run, rep); err != nil {
		return err
	}
	// This machine's sync log, replay logs and chat history hold
	// copies of the text: rewritten too, the repeats of the values
	// found replaced as in the store, and the store's files scrubbed.
	// The report is printed whatever comes of it: the messages are
	// redacted.
	scrubErr := afterRedact(ctx, opts, st, run.Redactor(), newScope(opts.Ref, looked, rep.Skipped), rep.Secrets > 0)
	if rep.Parts > 0 {
		if err := forgetScans(&opts.Common, d, todo); err != nil {
			return err
		}
	}
	if err := finishRedact(&opts.Common, rep); err != nil {
		return err
	}
	if scrubErr != nil {
		return fmt.Errorf("the secrets are replaced in the messages, but not yet gone from every file: %w", scrubErr)
	}
	if len(rep.Skipped) > 0 {
		return fmt.Errorf("%s skipped: another process is writing them; run loom secrets redact again when it is done", human.Plural(len(rep.Skipped), "session"))
	}
	return nil
}

// reportPlans adds to rep what the plans of the sessions to redact
// would replace: their secrets by rule, and the repeats.
func reportPlans(rep *RedactReport, todo []*loom.Session, plans map[string]*sessionPlan, run *sec.Echoes) {
	for _, s := range todo {
		p := plans[s.ID]
		title, _ := run.Redactor().Redact(s.Title)
		sf := &SessionFindings{SessionID: s.ID, Title: title, Rules: map[string]int{}, Places: p.places, Echoes: p.echoes}
		for _, c := range p.changes {
			sf.Count += c.n
			rep.Secrets += c.n
			rep.Parts++
		}
		rep.Echoes += p.echoes
		for _, pl := range p.places {
			if !pl.Echo {
				sf.Rules[pl.RuleID]++
			}
		}
		rep.Sessions = append(rep.Sessions, sf)
	}
}

// confirmRedact says what a redaction will replace, and unless --yes
// asks whether to go on: no is a silent exit 1.
func confirmRedact(ctx context.Context, opts *RedactOptions, rep *RedactReport) error {
	ios := opts.IO
	fmt.Fprintf(ios.ErrWrapped(), "loom: %s in %s of %s will be replaced by [REDACTED:rule] markers; the original text will be gone from this store for good, and from your other machines after loom sync\n",
		human.Plural(rep.Secrets, "secret"), human.Plural(rep.Parts, "part"), human.Plural(len(rep.Sessions), "session"))
	if opts.Yes {
		return nil
	}
	ok, err := term.Confirm(ctx, ios, "Redact them?")
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(ios.ErrOut, "Nothing redacted.")
		return &command.SilentError{Code: command.ExitError}
	}
	return nil
}

// redactPlanned redacts the sessions todo, counting in rep what it
// replaced and the sessions another process holds (skipped).
func redactPlanned(ctx context.Context, ios *term.IOStreams, st loom.Store, d *sec.Detector, todo []*loom.Session, run *sec.Echoes, rep *RedactReport) error {
	// Planned again session by session, as it is written: a fork reads
	// the messages it inherits from its parent, redacted just before.
	rep.Secrets, rep.Parts, rep.Echoes = 0, 0, 0
	for _, s := range todo {
		p, _, err := plan(ctx, st, d, s.ID, run)
		if err != nil {
			return err
		}
		done, n, err := apply(ctx, st, s.ID, p.changes)
		rep.Parts += done
		rep.Secrets += n
		if loom.ErrorCode(err) == loom.ELOCKED {
			fmt.Fprintf(ios.ErrOut, "loom: %s skipped: %s\n", s.ID, loom.ErrorMessage(err))
			rep.Skipped = append(rep.Skipped, s.ID)
			continue
		}
		if err != nil {
			return err
		}
		rep.Echoes += p.echoes
	}
	return nil
}

// forgetScans drops the redacted sessions from the memo of scans: they
// are to be scanned again.
func forgetScans(c *Common, d *sec.Detector, todo []*loom.Session) error {
	memo, err := openMemo(c, d)
	if err != nil {
		return err
	}
	for _, s := range todo {
		memo.forget(s.ID)
	}
	return memo.save()
}

// apply stores the redacted parts of session id, each as a part update
// (recorded for sync), and returns how many parts and secrets it wrote.
func apply(ctx context.Context, st loom.Store, id string, changes []partChange) (int, int, error) {
	parts, n := 0, 0
	for _, c := range changes {
		if c.meta != nil {
			if _, err := st.UpdateSession(ctx, id, *c.meta); err != nil {
				return parts, n, fmt.Errorf("redact the title of %s: %w", id, err)
			}
			n += c.n
			continue
		}
		if err := st.UpdatePart(ctx, id, c.seq, c.part); err != nil {
			return parts, n, fmt.Errorf("redact message %d of %s: %w", c.seq, id, err)
		}
		parts++
		n += c.n
	}
	return parts, n, nil
}

func finishRedact(c *Common, rep *RedactReport) error {
	if c.JSON {
		return command.WriteJSON(c.IO.Out, rep)
	}
	w := c.IO.Out
	verb := "redacted"
	if rep.DryRun {
		verb = "would redact"
	}
	for _, s := range rep.Sessions {
		counts := ruleCounts(s.Rules)
		if s.Echoes > 0 {
			counts = strings.TrimPrefix(counts+fmt.Sprintf(", repeated %d", s.Echoes), ", ")
		}
		fmt.Fprintf(w, "%s %s: %s %s (%s)\n", s.SessionID, command.JSONString(human.OneLine(s.Title)), verb, human.Plural(s.Count, "secret"), counts)
	}
	repeats := ""
	if rep.Echoes > 0 {
		repeats = fmt.Sprintf(" (%d of them repeats, where no rule sees them, of a secret found elsewhere)", rep.Echoes)
	}
	switch {
	case rep.Secrets == 0 && len(rep.Sessions) == 0:
		fmt.Fprintln(w, "no secrets found")
	case rep.DryRun:
		fmt.Fprintf(w, "would redact %s in %s of %s%s; nothing was changed\n", human.Plural(rep.Secrets, "secret"), human.Plural(rep.Parts, "part"), human.Plural(len(rep.Sessions), "session"), repeats)
	default:
		fmt.Fprintf(w, "redacted %s in %s%s; the original text is gone (loom sync redacts your other machines)\n", human.Plural(rep.Secrets, "secret"), human.Plural(rep.Parts, "part"), repeats)
	}
	return nil
}
