package session

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/chat"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

// ResumeOptions are the options of `loom session resume`.
type ResumeOptions struct {
	IO *term.IOStreams
	// Store opens the store to change sessions in it.
	Store func(context.Context) (loom.Engine, error)
	// Resolve finds the live session a reference names.
	Resolve func(ctx context.Context, st loom.Reader, ref string) (*loom.Session, error)
	// Project is the working directory's project, the picker's first.
	Project func() (loom.Project, error)
	// Chat chats in the session id; Run sends it prompt.
	Chat func(ctx context.Context, id string) error
	Run  func(ctx context.Context, id, prompt string) error
	Now  func() time.Time
	User string
	JSON bool

	Ref    string
	Prompt string
}

func newCmdSessionResume(inv *command.Invocation, runF func(*ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{
		IO:      inv.IO,
		Store:   inv.Store,
		Resolve: inv.Scope().Resolve,
		Project: inv.Project,
		Chat: func(ctx context.Context, id string) error {
			co := chat.NewOptions(inv)
			co.User, co.Choice = inv.User(), command.SessionChoice{Resume: id}
			return chat.Chat(ctx, co)
		},
		Run: func(ctx context.Context, id, prompt string) error {
			ro := chat.NewRunOptions(inv)
			ro.JSON, ro.Prompt, ro.Choice = inv.JSON(), prompt, command.SessionChoice{Resume: id}
			return chat.Run(ctx, ro)
		},
		Now: inv.TimeNow,
	}
	cmd := &cobra.Command{
		Use:   "resume [REF] [PROMPT]",
		Short: "Resume a session: chat in it, or send it one PROMPT",
		Long: `Resume a session: the same as loom chat --resume REF, or, with PROMPT,
loom run --resume REF PROMPT.

Without REF on a terminal, a picker lists this project's sessions,
newest first, with a preview of the selected one: / filters them (title,
key, last prompt), tab searches their messages, ctrl+a widens the list to
every project, r renames, a archives, d moves to the trash, enter
chooses, esc leaves. Without REF elsewhere, REF is required. With --json
the session is printed instead of resumed.`,
		Example: `  loom session resume
  loom session resume 0196a3b2
  loom session resume "flaky test" "and now the integration tests"`,
		Args: command.ArgsBetween(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Ref = args[0]
			}
			if len(args) > 1 {
				opts.Prompt = args[1]
			}
			if opts.Ref == "" && !inv.IO.CanPrompt() {
				return command.UsageErrorf("a session reference is required when not on a terminal; usage: %s", cmd.UseLine())
			}
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return resumeRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func resumeRun(ctx context.Context, opts *ResumeOptions) error {
	st, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	var s *loom.Session
	if opts.Ref != "" {
		if s, err = opts.Resolve(ctx, st, opts.Ref); err != nil {
			return err
		}
	} else if s, err = chat.PickSession(ctx, opts.IO, st, opts.User, opts.Project, opts.Now); err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, s)
	}
	if opts.Prompt != "" {
		return opts.Run(ctx, s.ID, opts.Prompt)
	}
	return opts.Chat(ctx, s.ID)
}
