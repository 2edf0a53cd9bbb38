// Package secrets is `loom secrets`: finding the secrets a store holds
// (scan) and replacing them in place (redact).
package secrets

import (
	"cmp"
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
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
		Detector:  command.ConfigLoader(inv.Config).Detector,
		Dirs:      inv.Dirs,
		DBURL:     inv.DBURL,
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
