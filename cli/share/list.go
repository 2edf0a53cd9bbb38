package share

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/share"
)

// Record is a link made on this machine, as loom share list shows it.
// The link holds its key, so the file is kept readable by this user
// only.
type Record struct {
	ID        string     `json:"id"`
	Hub       string     `json:"hub"`
	Link      string     `json:"link"`
	SessionID string     `json:"session_id"`
	Title     string     `json:"title"`
	Turns     string     `json:"turns,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// State is "live", "revoked" or "expired" at now.
func (r *Record) State(now time.Time) string {
	s := loom.Share{ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt}
	return s.State(now)
}

// recordsFile is where the links user made here are kept: state, mode
// 0600 (links carry their keys).
func recordsFile(d paths.Dirs, user string) string {
	return filepath.Join(d.State, "shares-"+paths.Sanitize(user)+".json")
}

func readRecords(dirs func() (paths.Dirs, error), errOut io.Writer, user string) ([]Record, error) {
	d, err := dirs()
	if err != nil {
		return nil, err
	}
	b, err := command.ReadSecret(errOut, recordsFile(d, user))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rs []Record
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): move it away to start a new list", recordsFile(d, user), err)
	}
	return rs, nil
}

// remember changes the records of user by edit and writes them back;
// errOut hears of a records file others may read.
func remember(dirs func() (paths.Dirs, error), errOut io.Writer, user string, edit func([]Record) []Record) error {
	rs, err := readRecords(dirs, errOut, user)
	if err != nil {
		return err
	}
	rs = edit(rs)
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	d, err := dirs()
	if err != nil {
		return err
	}
	return command.WriteSecret(d.State, recordsFile(d, user), string(b))
}

// ListOptions are the options of loom share list.
type ListOptions struct {
	Env
}

// newCmdList builds loom share list. runF, when not nil, is called with
// the options instead of running the command (for tests).
func newCmdList(inv *command.Invocation, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{Env: NewEnv(inv)}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the share links made on this machine",
		Long: `List the share links made on this machine, newest first: id, session,
state (live, expired or revoked), when it expires, and the link itself,
key included. --json prints every field.`,
		Example: `  loom share list
  loom share list --json | jq -r '.[] | select(.state == "live") | .link'`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return listRun(opts)
		},
	}
	return cmd
}

// listed is a record as loom share list --json prints it.
type listed struct {
	Record
	State string `json:"state"`
}

func listRun(e *ListOptions) error {
	rs, err := readRecords(e.Dirs, e.IO.ErrOut, e.User)
	if err != nil {
		return err
	}
	now := e.Now()
	out := make([]listed, 0, len(rs))
	for i := len(rs) - 1; i >= 0; i-- {
		out = append(out, listed{Record: rs[i], State: rs[i].State(now)})
	}
	if e.JSON {
		return command.WriteJSON(e.IO.Out, out)
	}
	if len(out) == 0 {
		if e.IO.IsStdoutTTY() {
			fmt.Fprintln(e.IO.ErrOut, "No share links made here. 'loom share SESSION' makes one.")
		}
		return nil
	}
	cs := e.IO.ColorScheme()
	tp := term.NewTable(e.IO)
	tp.Header("ID", "SESSION", "STATE", "EXPIRES", "LINK")
	tp.Flex(1)
	for _, r := range out {
		tp.AddField(r.ID, cs.Cyan)
		title := r.Title
		if r.Turns != "" {
			title += " (turns " + r.Turns + ")"
		}
		tp.AddField(term.SanitizeLine(title), nil)
		color := cs.Gray
		if r.State != "live" {
			color = cs.Red
		}
		tp.AddField(r.State, color)
		switch {
		case !e.IO.IsStdoutTTY():
			tp.AddField(loom.FormatTime(r.ExpiresAt), nil)
		case r.State == "expired":
			tp.AddField("expired "+human.ShortAgo(now, r.ExpiresAt), cs.Red)
		default:
			tp.AddField(r.ExpiresAt.Local().Format("Jan 2 15:04"), cs.Gray)
		}
		tp.AddField(r.Link, nil)
		tp.EndRow()
	}
	return tp.Render()
}

// RevokeOptions are the options of loom share revoke.
type RevokeOptions struct {
	Env
	IDs []string
	All bool
}

// newCmdRevoke builds loom share revoke. runF, when not nil, is called
// with the options instead of running the command (for tests).
func newCmdRevoke(inv *command.Invocation, runF func(*RevokeOptions) error) *cobra.Command {
	opts := &RevokeOptions{Env: NewEnv(inv)}
	cmd := &cobra.Command{
		Use:   "revoke ID... | --all",
		Short: "End share links: the hub deletes their ciphertext and they answer 404",
		Long: `Revoke share links by id (as loom share list shows it, or a unique prefix
of one made here). The hub deletes the sealed session at once and the
link answers 404 from then on; revoking cannot be undone (share again
for a new link). --all revokes every live share of yours on the hub,
those made on other machines included. An id made by an older loom may
begin with '-': give it after --.

The hub is the one the link was made through, else --hub, [share] hub
or [sync] hub, with --token, [share] token or [sync] token.`,
		Example: `  loom share revoke Xb3kq2
  loom share revoke -- -Xk3q2
  loom share revoke --all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.All && len(args) > 0:
				return command.UsageErrorf("give share ids or --all, not both")
			case !opts.All && len(args) == 0:
				return command.UsageErrorf("which share? give its id (loom share list shows them), or --all")
			}
			opts.IDs, opts.User, opts.JSON = args, inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return revokeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "revoke every live share of yours on the hub")
	addHubFlags(cmd, &opts.Env)
	return cmd
}

// revoked is what loom share revoke --json prints.
type revoked struct {
	Revoked []string `json:"revoked"`
}

func revokeRun(ctx context.Context, opts *RevokeOptions) error {
	rs, err := readRecords(opts.Dirs, opts.IO.ErrOut, opts.User)
	if err != nil {
		return err
	}
	hc, hubErr := opts.Client()
	var done []string
	if opts.All {
		if hubErr != nil {
			return hubErr
		}
		list, err := hc.Shares(ctx)
		if err != nil {
			return err
		}
		now := opts.Now()
		for _, sh := range list {
			if sh.RevokedAt != nil || (!sh.Live(now) && sh.Size == 0) {
				continue
			}
			if err := hc.Revoke(ctx, sh.ID); err != nil {
				return revokedSoFar(opts, done, err)
			}
			done = append(done, sh.ID)
		}
	}
	for _, ref := range opts.IDs {
		id, hubURL, err := findRecord(rs, ref)
		if err != nil {
			return revokedSoFar(opts, done, err)
		}
		c := hc
		if hubURL != "" && (hc == nil || hubURL != hc.URL) {
			// Made through another hub than the configured one: its
			// token goes to no other hub than its own.
			if opts.Token == "" {
				return revokedSoFar(opts, done, loom.Errorf(loom.EINVALID, "share %s was made through %s: pass --hub %s --token TOKEN, a token of yours there", id, hubURL, hubURL))
			}
			c = &share.Client{URL: hubURL, Token: opts.Token, HTTP: opts.HTTP}
		}
		if c == nil {
			return revokedSoFar(opts, done, hubErr)
		}
		if err := c.Revoke(ctx, id); err != nil {
			return revokedSoFar(opts, done, err)
		}
		done = append(done, id)
	}
	return revokedSoFar(opts, done, nil)
}

// revokedSoFar notes the revoked shares here and says so, then returns
// err.
func revokedSoFar(opts *RevokeOptions, done []string, err error) error {
	if len(done) > 0 {
		at := opts.Now().UTC()
		gone := map[string]bool{}
		for _, id := range done {
			gone[id] = true
		}
		if werr := remember(opts.Dirs, opts.IO.ErrOut, opts.User, func(rs []Record) []Record {
			for i := range rs {
				if gone[rs[i].ID] && rs[i].RevokedAt == nil {
					rs[i].RevokedAt = &at
				}
			}
			return rs
		}); werr != nil {
			fmt.Fprintf(opts.IO.ErrOut, "loom: warning: revoked on the hub, but not noted here: %v\n", werr)
		}
	}
	if err != nil {
		if len(done) > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "Revoked %s before the error: %s\n", human.Plural(len(done), "share"), strings.Join(done, ", "))
		}
		return err
	}
	if opts.JSON {
		if done == nil {
			done = []string{}
		}
		return command.WriteJSON(opts.IO.Out, revoked{Revoked: done})
	}
	switch {
	case len(done) == 0:
		fmt.Fprintln(opts.IO.ErrOut, "No live shares to revoke.")
	default:
		fmt.Fprintf(opts.IO.ErrOut, "Revoked %s: %s. Their links answer 404 and the hub has deleted them.\n", human.Plural(len(done), "share"), strings.Join(done, ", "))
	}
	return nil
}

// findRecord returns the id that ref names among the records made here
// (an id or a unique prefix) and its hub; an id not made here is taken
// as it is, for the configured hub.
func findRecord(rs []Record, ref string) (id, hubURL string, err error) {
	var hits []Record
	for _, r := range rs {
		if r.ID == ref {
			return r.ID, r.Hub, nil
		}
		if len(ref) >= 4 && strings.HasPrefix(r.ID, ref) {
			hits = append(hits, r)
		}
	}
	switch {
	case len(hits) == 1:
		return hits[0].ID, hits[0].Hub, nil
	case len(hits) > 1:
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		return "", "", loom.Errorf(loom.EAMBIGUOUS, "%q names %d shares: %s", ref, len(hits), strings.Join(ids, ", "))
	case !loom.ValidShareID(ref):
		return "", "", loom.Errorf(loom.ENOTFOUND, "no share %q made here (loom share list shows them)", ref)
	}
	return ref, "", nil
}
