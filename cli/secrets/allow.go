package secrets

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/human"
	"github.com/loomhq/loom/paths"
	sec "github.com/loomhq/loom/secrets"
)

// AllowOptions are the options of `loom secrets allow`.
type AllowOptions struct {
	IO   *term.IOStreams
	Dirs func() (paths.Dirs, error)
	JSON bool

	IDs    []string
	Note   string
	Remove bool
}

// newCmdAllow builds `loom secrets allow`. runF, when not nil, is called
// with the options instead of running the command (for tests).
func newCmdAllow(inv *command.Invocation, runF func(*AllowOptions) error) *cobra.Command {
	opts := &AllowOptions{IO: inv.IO, Dirs: inv.Dirs}
	cmd := &cobra.Command{
		Use:   "allow [ID...]",
		Short: "Never report a value again: keep a false positive off scans and redactions",
		Long: `Keep values that loom secrets scan reports, but that are no secrets (a
hash, a document id, a test fixture), from ever being reported or
redacted again: not by scan and redact, nor on the way out (exports,
hand-off, shares, the MCP tools, recall). Give each by the id the scan
shows beside it (16 hex digits: the start of the value's SHA-256, so the
list holds no value).

The list is kept in secrets-allow.txt in loom's configuration directory,
one id a line with its note; without ID, allow lists it. --remove takes
ids off it. Expressions that allow whole families of values go in
config.toml's [secrets] allow instead.`,
		Example: `  loom secrets scan
  loom secrets allow 4f2a9c0e1b3d5f7a --note "lockfile integrity hash"
  loom secrets allow
  loom secrets allow --remove 4f2a9c0e1b3d5f7a`,
		Args: command.ArgsBetween(0, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if !sec.ValidID(strings.ToLower(a)) {
					return command.UsageErrorf("%q is not a secret's id: give the 16 hex digits loom secrets scan shows after \"id\"", a)
				}
			}
			if opts.Remove && len(args) == 0 {
				return command.UsageErrorf("--remove needs the ids to take off the list")
			}
			if opts.Note != "" && len(args) == 0 {
				return command.UsageErrorf("--note goes with the ids it describes")
			}
			opts.IDs, opts.JSON = args, inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return allowRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Note, "note", "", "what the values are, kept beside their ids")
	cmd.Flags().BoolVar(&opts.Remove, "remove", false, "take the ids off the list: report the values again")
	return cmd
}

func allowRun(opts *AllowOptions) error {
	dirs, err := opts.Dirs()
	if err != nil {
		return err
	}
	path := config.AllowFile(dirs.Config)
	entries, err := sec.ReadAllow(path)
	if err != nil {
		return err
	}
	if len(opts.IDs) == 0 {
		return writeAllowList(opts, path, entries)
	}
	changed := 0
	for _, raw := range opts.IDs {
		id := strings.ToLower(raw)
		i := slices.IndexFunc(entries, func(e sec.AllowEntry) bool { return e.ID == id })
		switch {
		case opts.Remove && i >= 0:
			entries = slices.Delete(entries, i, i+1)
			changed++
		case opts.Remove:
			fmt.Fprintf(opts.IO.ErrOut, "loom: %s is not on the list\n", id)
		case i >= 0:
			if opts.Note != "" {
				entries[i].Note = opts.Note
				changed++
			}
		default:
			entries = append(entries, sec.AllowEntry{ID: id, Note: opts.Note})
			changed++
		}
	}
	if changed > 0 {
		if err := os.MkdirAll(dirs.Config, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", dirs.Config, err)
		}
		if err := sec.WriteAllow(path, entries); err != nil {
			return err
		}
	}
	if opts.JSON {
		return writeAllowList(opts, path, entries)
	}
	switch {
	case opts.Remove:
		fmt.Fprintf(opts.IO.Out, "Took %s off the allow-list: scans report them again.\n", human.Plural(changed, "id"))
	default:
		fmt.Fprintf(opts.IO.Out, "Allowed %s: never reported or redacted again (loom secrets allow --remove ID undoes it).\n", human.Plural(len(opts.IDs), "value"))
	}
	return nil
}

func writeAllowList(opts *AllowOptions, path string, entries []sec.AllowEntry) error {
	if opts.JSON {
		if entries == nil {
			entries = []sec.AllowEntry{}
		}
		return command.WriteJSON(opts.IO.Out, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintf(opts.IO.Out, "No value is allowed (%s).\n", path)
		return nil
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 0, 2, ' ', 0)
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\n", e.ID, term.SanitizeLine(e.Note))
	}
	return tw.Flush()
}
