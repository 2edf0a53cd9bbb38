package session

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/chat"
	"github.com/loomhq/loom/cli/command"
)

// ResumeOptions are the options of `loom session resume`.
type ResumeOptions struct {
	f      *command.Factory
	Ref    string
	Prompt string
}

func newCmdSessionResume(f *command.Factory) *cobra.Command {
	opts := &ResumeOptions{f: f}
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
			if opts.Ref == "" && !f.IO.CanPrompt() {
				return command.UsageErrorf("a session reference is required when not on a terminal; usage: %s", cmd.UseLine())
			}
			return resumeRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func resumeRun(ctx context.Context, opts *ResumeOptions) error {
	f := opts.f
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	var s *loom.Session
	if opts.Ref != "" {
		if s, err = f.Resolve(ctx, st, opts.Ref); err != nil {
			return err
		}
	} else if s, err = chat.PickSession(ctx, f.IO, st, f.User(), f.Project, f.TimeNow); err != nil {
		return err
	}
	if f.JSON() {
		return command.WriteJSON(f.IO.Out, s)
	}
	if opts.Prompt != "" {
		ro := chat.NewRunOptions(f)
		ro.Prompt, ro.Choice = opts.Prompt, command.SessionChoice{Resume: s.ID}
		return chat.Run(ctx, ro)
	}
	co := chat.NewOptions(f)
	co.User, co.Choice = f.User(), command.SessionChoice{Resume: s.ID}
	return chat.Chat(ctx, co)
}
