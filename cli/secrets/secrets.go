// Package secrets is `loom secrets`: finding the secrets a store holds
// (scan) and replacing them in place (redact).
package secrets

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
	sec "github.com/loomhq/loom/secrets"
)

// Common is what scan and redact both use: the streams, the store, the
// detector and where a scan's memo is kept, the user and --json.
type Common struct {
	IO *term.IOStreams
	// ReadStore opens the store to read.
	ReadStore func(context.Context) (loom.Engine, error)
	// Resolve finds the session a reference names.
	Resolve func(ctx context.Context, st loom.Reader, ref string) (*loom.Session, error)
	// Detector is the secret detector of config.toml's [secrets].
	Detector func() (*sec.Detector, error)
	// Dirs and DBURL say where a scan's memo is kept (loom's state
	// directory) and the store it is about.
	Dirs  func() (paths.Dirs, error)
	DBURL func() (string, error)
	User  string
	JSON  bool
}

func commonOf(inv *command.Invocation) Common {
	return Common{
		IO:        inv.IO,
		ReadStore: inv.ReadStore,
		Resolve:   inv.Scope().Resolve,
		Detector: func() (*sec.Detector, error) {
			d, _, err := command.ConfigLoader(inv.Config).Secrets()
			return d, err
		},
		Dirs:  inv.Dirs,
		DBURL: inv.DBURL,
	}
}

// ScanOptions are the options of `loom secrets scan`.
type ScanOptions struct {
	Common

	// Ref names the session scanned; empty: every session of the user.
	Ref  string
	Full bool
}

// RedactOptions are the options of `loom secrets redact`.
type RedactOptions struct {
	Common
	// Store opens the store to change it.
	Store func(context.Context) (loom.Engine, error)

	// Ref names the session redacted; empty: every session of the user.
	Ref    string
	DryRun bool
	Yes    bool
}

// NewCmdSecrets returns `loom secrets`.
func NewCmdSecrets(inv *command.Invocation) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "Find secrets in stored sessions and redact them",
		Long: `Find the secrets stored sessions hold (provider keys and tokens, passwords
in URLs, connection strings and configuration, Authorization headers and
cookies, private keys, Kubernetes Secrets) and replace them in place.

Every way stored text leaves the machine (markdown and html exports,
hand-off, shares, the MCP tools, recall and its hooks) redacts secrets by
default; these commands act on the store itself, and allow keeps a false
positive from being reported again. Rules, allow-list and redaction as
sessions are written are set in config.toml's [secrets]. See
docs/security.md.`,
		Example: `  loom secrets scan
  loom secrets scan --json | jq '.sessions[].rules'
  loom secrets redact --dry-run
  loom secrets allow 4f2a9c0e1b3d5f7a --note "a build id"`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdScan(inv, nil), newCmdRedact(inv, nil), newCmdAllow(inv, nil))
	return cmd
}

// sessionScope returns the sessions a command acts on: the one ref names,
// or every session of the user (archived ones too), oldest first, so
// that a session is redacted before the forks that inherit its messages.
func sessionScope(ctx context.Context, c *Common, st loom.Store, ref string) ([]*loom.Session, error) {
	if ref != "" {
		s, err := c.Resolve(ctx, st, ref)
		if err != nil {
			return nil, err
		}
		return []*loom.Session{s}, nil
	}
	all, err := st.Sessions(ctx, loom.SessionFilter{UserID: c.User, Archived: loom.WithArchived})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, func(a, b *loom.Session) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return all, nil
}

// SessionFindings is what a scan found in one session (the JSON shape of
// `loom secrets scan --json`).
type SessionFindings struct {
	SessionID string         `json:"session_id"`
	Title     string         `json:"title"`
	Count     int            `json:"count"`
	Rules     map[string]int `json:"rules"`
	Places    []sec.Place    `json:"places"`
	// Echoes counts, of a redaction's Count, the repeats of secrets
	// found elsewhere, where no rule sees them (sec.Echoes); their
	// places are marked echo.
	Echoes int `json:"echoes,omitempty"`
}

// ScanReport is the JSON shape of `loom secrets scan --json`.
type ScanReport struct {
	Secrets  int                `json:"secrets"`
	Sessions []*SessionFindings `json:"sessions"`
	// Scanned counts the sessions looked at and the messages read (the
	// others were scanned before and have not changed since).
	ScannedSessions int `json:"scanned_sessions"`
	ScannedMessages int `json:"scanned_messages"`
}

// newCmdScan builds `loom secrets scan`. runF, when not nil, is called
// with the options instead of running the command (for tests).
func newCmdScan(inv *command.Invocation, runF func(*ScanOptions) error) *cobra.Command {
	opts := &ScanOptions{Common: commonOf(inv)}
	cmd := &cobra.Command{
		Use:   "scan [SESSION]",
		Short: "Report the secrets stored sessions hold, never their values",
		Long: `Report, per session and rule, the secrets stored sessions hold: how many,
and where (message id and seq, part index, field), with at most the first
and last four characters of each. Without SESSION, every session of the
user is scanned.

A scan remembers how far it read each session (in loom's state
directory), and the next one reads only what was written since; --full
reads everything again. Changing the rules or the allow-list in
config.toml starts over by itself.`,
		Example: `  loom secrets scan
  loom secrets scan 0196a3b2
  loom secrets scan --json | jq '.sessions[] | {session_id, rules}'
  loom secrets scan --full`,
		Args: command.ArgsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Ref = args[0]
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return scanRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Full, "full", false, "read every message again, not only those written since the last scan")
	return cmd
}

func scanRun(ctx context.Context, opts *ScanOptions) error {
	rep, err := scan(ctx, opts)
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, rep)
	}
	writeScan(opts.IO.Out, rep)
	return nil
}

func scan(ctx context.Context, opts *ScanOptions) (*ScanReport, error) {
	d, err := opts.Detector()
	if err != nil {
		return nil, err
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return nil, err
	}
	sessions, err := sessionScope(ctx, &opts.Common, st, opts.Ref)
	if err != nil {
		return nil, err
	}
	memo, err := openMemo(&opts.Common, d)
	if err != nil {
		return nil, err
	}
	rep := &ScanReport{Sessions: []*SessionFindings{}}
	// Sessions are scanned by as many workers as there are cores (the
	// store reads in parallel), and reported in their order.
	type scanned struct {
		places []sec.Place
		read   int
		err    error
	}
	results := make([]scanned, len(sessions))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(sessions))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &results[i]
				if r.err = ctx.Err(); r.err == nil {
					r.places, r.read, r.err = memo.scan(ctx, st, d, sessions[i], opts.Full)
				}
			}
		}()
	}
	for i := range sessions {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, s := range sessions {
		places, read, err := results[i].places, results[i].read, results[i].err
		if err != nil {
			return nil, err
		}
		rep.ScannedSessions++
		rep.ScannedMessages += read
		if len(places) == 0 {
			continue
		}
		title, _ := d.Redact(s.Title)
		sf := &SessionFindings{SessionID: s.ID, Title: title, Count: len(places), Rules: map[string]int{}, Places: places}
		for _, p := range places {
			sf.Rules[p.RuleID]++
		}
		rep.Sessions = append(rep.Sessions, sf)
		rep.Secrets += len(places)
	}
	if err := memo.save(); err != nil {
		return nil, err
	}
	return rep, nil
}

func ruleCounts(rules map[string]int) string {
	ids := slices.Sorted(maps.Keys(rules))
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s %d", id, rules[id])
	}
	return strings.Join(parts, ", ")
}

func writeScan(w io.Writer, rep *ScanReport) {
	for _, s := range rep.Sessions {
		fmt.Fprintf(w, "%s %s: %s (%s)\n", s.SessionID, command.JSONString(human.OneLine(s.Title)), human.Plural(s.Count, "secret"), ruleCounts(s.Rules))
		for _, p := range s.Places {
			fmt.Fprintf(w, "  seq %-4d part %d %-8s %-22s %-10s id %s\n", p.Seq, p.Part, p.Field, p.RuleID, p.Hint, p.ID)
		}
	}
	if rep.Secrets == 0 {
		fmt.Fprintf(w, "no secrets found in %s (%s read)\n", human.Plural(rep.ScannedSessions, "session"), human.Plural(rep.ScannedMessages, "message"))
		return
	}
	fmt.Fprintf(w, "%s in %s of %s (%s read)\n", human.Plural(rep.Secrets, "secret"),
		human.Plural(len(rep.Sessions), "session"), human.Plural(rep.ScannedSessions, "session"), human.Plural(rep.ScannedMessages, "message"))
	fmt.Fprintln(w, "loom secrets redact replaces them; loom secrets allow ID keeps a value that is none")
}

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

// partChange is one part to store again, redacted.
type partChange struct {
	seq  int64
	part loom.Part
	// meta, when set, is a change of the session's title and
	// description instead.
	meta *loom.SessionUpdate
	n    int
}

// sessionPlan is what redacting one session changes: its parts (and
// title) redacted, where its secrets are, and how many of those
// replaced are repeats of a secret found elsewhere (echoes).
type sessionPlan struct {
	changes []partChange
	places  []sec.Place
	echoes  int
}

// Bounds on the repeats a redaction replaces beyond the session a value
// was found in (see sec.Echoes).
const (
	// runEchoes is how many literals of the values found in every
	// session a run keeps, to replace them in the others: about 50 MB
	// of automata at most.
	runEchoes = 4096
	// echoHits is how many messages the search for one value reads.
	echoHits = 10000
)

// plan returns the parts of session id that hold secrets, redacted, and
// where the secrets are. A value the detector finds in the session is
// replaced wherever else it appears in it too, before the place that
// gave it away as well as after, and so are run's, found in the run's
// other sessions. It returns the session's values too.
func plan(ctx context.Context, st loom.Store, d *sec.Detector, id string, run *sec.Echoes) (*sessionPlan, *sec.Echoes, error) {
	s, err := st.Session(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	msgs, err := st.Messages(ctx, id, loom.MessageQuery{})
	if err != nil {
		return nil, nil, err
	}
	own := d.Echoes(0, run)
	p := &sessionPlan{}
	// First the detector over every text, which keeps the values it
	// finds; then their repeats, wherever they are.
	type partAt struct {
		seq int64
		red loom.Part
		n   int
	}
	title, a := own.Redact(s.Title)
	desc, b := own.Redact(s.Description)
	var parts []partAt
	reds := make([]*loom.Message, len(msgs))
	for i, m := range msgs {
		c := *m
		c.Parts = make([]loom.Part, len(m.Parts))
		for k, part := range m.Parts {
			var n int
			c.Parts[k], n = own.RedactPart(part)
			parts = append(parts, partAt{seq: m.Seq, red: c.Parts[k], n: n})
		}
		reds[i] = &c
		p.places = append(p.places, d.ScanMessage(m)...)
	}
	// The title and description, which listings show, are the
	// session's row: one change of seq 0.
	for _, f := range []struct{ name, text, red string }{{"title", s.Title, title}, {"description", s.Description, desc}} {
		for _, x := range d.Find(f.text) {
			p.places = append(p.places, sec.Place{Part: -1, Field: f.name, RuleID: x.RuleID, Hint: sec.Hint(f.text[x.Start:x.End]), ID: x.ID})
		}
		for _, x := range own.Find(f.red) {
			p.places = append(p.places, sec.Place{Part: -1, Field: f.name, RuleID: x.RuleID, Hint: sec.Hint(f.red[x.Start:x.End]), ID: x.ID, Echo: true})
		}
	}
	title, ea := own.Replace(title)
	desc, eb := own.Replace(desc)
	if n := a + b + ea + eb; n > 0 {
		p.changes = append(p.changes, partChange{meta: &loom.SessionUpdate{Title: &title, Description: &desc}, n: n})
		p.echoes += ea + eb
	}
	for _, m := range reds {
		p.places = append(p.places, own.ScanMessage(m)...)
	}
	for _, at := range parts {
		red, k := own.ReplacePart(at.red)
		if at.n+k > 0 {
			p.changes = append(p.changes, partChange{seq: at.seq, part: red, n: at.n + k})
			p.echoes += k
		}
	}
	return p, own, nil
}

// echoedIn returns the sessions of user whose messages the search index
// finds one of values in: where a value found in one session may be
// repeated in another out of sight of the rules. The index finds
// candidates; the literal pass over them decides.
func echoedIn(ctx context.Context, st loom.Store, user string, values []string) (map[string]bool, error) {
	ids := map[string]bool{}
	for _, v := range values {
		// The value's words, as a phrase: the index holds words.
		var words []string
		size := 0
		for _, w := range loom.Words(v) {
			if len(words) == 8 || size+len(w) > loom.MaxQueryBytes-16 {
				break
			}
			words, size = append(words, w), size+len(w)+1
		}
		if len(words) == 0 {
			continue
		}
		q := `"` + strings.Join(words, " ") + `"`
		hits, err := st.Search(ctx, loom.SearchQuery{Text: q, UserID: user, Archived: true, Exact: true, Limit: echoHits})
		if loom.ErrorCode(err) == loom.EINVALID {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("search the store for repeats of the secrets found: %w", err)
		}
		for _, h := range hits {
			ids[h.SessionID] = true
			for _, o := range h.AlsoIn {
				ids[o] = true
			}
		}
	}
	return ids, nil
}

// planRun plans the redaction of sessions: each session's secrets and
// their repeats in it, then the repeats of every value found in any
// session of the run wherever the store holds them (echoedIn), in the
// sessions given and in others of the user's, which it adds. It
// returns the sessions to redact, oldest first, with their plans, every
// session it looked at, and the run's values.
func planRun(ctx context.Context, st loom.Store, d *sec.Detector, user string, sessions []*loom.Session) ([]*loom.Session, map[string]*sessionPlan, []*loom.Session, *sec.Echoes, error) {
	run := d.Echoes(runEchoes)
	plans := map[string]*sessionPlan{}
	for _, s := range sessions {
		p, own, err := plan(ctx, st, d, s.ID, run)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		plans[s.ID] = p
		run.Merge(own)
		run.Trim()
	}
	looked := slices.Clone(sessions)
	if run.Len() > 0 {
		others, err := echoedIn(ctx, st, user, run.Values())
		if err != nil {
			return nil, nil, nil, nil, err
		}
		for _, id := range slices.Sorted(maps.Keys(others)) {
			if _, ok := plans[id]; !ok {
				s, err := st.Session(ctx, id)
				if loom.ErrorCode(err) == loom.ENOTFOUND {
					continue
				}
				if err != nil {
					return nil, nil, nil, nil, err
				}
				looked = append(looked, s)
			}
			p, _, err := plan(ctx, st, d, id, run)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			plans[id] = p
		}
	}
	slices.SortStableFunc(looked, func(a, b *loom.Session) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	var todo []*loom.Session
	for _, s := range looked {
		if len(plans[s.ID].changes) > 0 {
			todo = append(todo, s)
		}
	}
	return todo, plans, looked, run, nil
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
	ios := opts.IO
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
	fmt.Fprintf(ios.ErrWrapped(), "loom: %s in %s of %s will be replaced by [REDACTED:rule] markers; the original text will be gone from this store for good, and from your other machines after loom sync\n",
		human.Plural(rep.Secrets, "secret"), human.Plural(rep.Parts, "part"), human.Plural(len(rep.Sessions), "session"))
	if !opts.Yes {
		ok, err := term.Confirm(ctx, ios, "Redact them?")
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(ios.ErrOut, "Nothing redacted.")
			return &command.SilentError{Code: command.ExitError}
		}
	}
	if err := beforeRedact(ctx, st); err != nil {
		return err
	}
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
	// This machine's sync log, replay logs and chat history hold
	// copies of the text: rewritten too, the repeats of the values
	// found replaced as in the store, and the store's files scrubbed.
	// The report is printed whatever comes of it: the messages are
	// redacted.
	scrubErr := afterRedact(ctx, opts, st, run.Redactor(), newScope(opts.Ref, looked, rep.Skipped), rep.Secrets > 0)
	if rep.Parts > 0 {
		memo, err := openMemo(&opts.Common, d)
		if err == nil {
			for _, s := range todo {
				memo.forget(s.ID)
			}
			err = memo.save()
		}
		if err != nil {
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
