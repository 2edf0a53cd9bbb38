// Package embed is loom embed: the vectors that rank search by meaning,
// made for every message that has none yet.
package embed

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/semantic"
)

// Options are the options of `loom embed`.
type Options struct {
	IO *term.IOStreams
	// Store opens the store to write its vectors; ReadStore to read
	// how far embedding has come (--status).
	Store     func(context.Context) (loom.Engine, error)
	ReadStore func(context.Context) (loom.Engine, error)
	// Client returns the embeddings endpoint's client, or nil and why
	// there is none.
	Client func(context.Context) (*embedding.Client, string)
	// StoreMissing reports whether the store opened stands for one not
	// created yet; nil when it cannot be.
	StoreMissing func() bool
	JSON         bool

	Status bool
}

// NewCmdEmbed builds loom embed. runF, when not nil, is called with the
// options instead of running the command (for tests).
func NewCmdEmbed(inv *command.Invocation, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO:        inv.IO,
		Store:     inv.Store,
		ReadStore: inv.ReadStore,
		Client:    command.EmbeddingsOf(inv.Factory).Client,

		StoreMissing: inv.StoreMissing,
	}
	cmd := &cobra.Command{
		Use:   "embed",
		Short: "Embed the messages search ranks by meaning",
		Long: `Embed every stored message that has no vector yet, with the embeddings
endpoint of config.toml ([embeddings]) or Ollama's nomic-embed-text, so
that loom search ranks by meaning as well as by keywords. loom serve does
the same in the background; loom embed catches up at once, and goes on
where it stopped when interrupted. Vectors are derived data: they are
never synced, and all made again when the model changes.

--status says how many messages have a vector and how many wait.`,
		Example: `  loom embed
  loom embed --status --json`,
		Args: command.ArgsBetween(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return embedRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Status, "status", false, "say how far embedding has come, embed nothing")
	return cmd
}

func embedRun(ctx context.Context, opts *Options) error {
	ios := opts.IO
	open := opts.Store
	if opts.Status {
		open = opts.ReadStore
	}
	st, err := open(ctx)
	if err != nil {
		return err
	}
	vs := st.Optional().Vectors
	if vs == nil && opts.StoreMissing != nil && opts.StoreMissing() {
		// No store yet: nothing is embedded, and nothing waits.
		if !opts.Status {
			fmt.Fprintln(ios.ErrOut, "loom embed: no store yet (nothing imported or written): nothing to embed")
			return nil
		}
		return writeStatus(ios, opts.JSON, loom.VectorStatus{})
	}
	if vs == nil {
		return loom.Errorf(loom.EINVALID, "this store keeps no vectors")
	}
	if !opts.Status {
		c, why := opts.Client(ctx)
		if c == nil {
			return loom.Errorf(loom.EINVALID, "nothing to embed with: %s", why)
		}
		e := &semantic.Embedder{Store: vs, Client: c}
		n, err := e.Run(ctx, 0)
		if errors.Is(err, semantic.ErrBusy) {
			return loom.Errorf(loom.ECONFLICT, "%v (loom serve, or another loom embed): it embeds them", err)
		}
		if err != nil && n > 0 {
			return fmt.Errorf("embedded %d messages, then: %w", n, err)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(ios.ErrOut, "embedded %d messages with %s\n", n, c.Model())
	}
	s, err := vs.VectorStatus(ctx)
	if err != nil {
		return err
	}
	return writeStatus(ios, opts.JSON, s)
}

// writeStatus prints how far embedding has come.
func writeStatus(ios *term.IOStreams, asJSON bool, s loom.VectorStatus) error {
	if asJSON {
		return command.WriteJSON(ios.Out, s)
	}
	if s.Model == "" {
		fmt.Fprintln(ios.Out, "no message is embedded yet")
		return nil
	}
	fmt.Fprintf(ios.Out, "%d messages embedded with %s, %d waiting\n", s.Vectors, s.Model, s.Pending)
	return nil
}
