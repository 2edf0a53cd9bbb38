package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
)

// ResumeOptions are the options of `loom session resume`.
type ResumeOptions struct {
	f      *Factory
	Ref    string
	Prompt string
}

func newCmdSessionResume(f *Factory, runF func(*ResumeOptions) error) *cobra.Command {
	opts := &ResumeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "resume [REF] [PROMPT]",
		Short: "Resume a session: chat in it, or send it one PROMPT",
		Long: `Resume a session: the same as loom chat --resume REF, or, with PROMPT,
loom run --resume REF PROMPT.

Without REF on a terminal, a fuzzy picker lists every session of this
project (title, last prompt, age, size): type to filter, enter to choose,
esc to leave. Without REF elsewhere, REF is required. With --json the
session is printed instead of resumed.`,
		Example: `  loom session resume
  loom session resume 0196a3b2
  loom session resume "flaky test" "and now the integration tests"`,
		Args: argsBetween(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Ref = args[0]
			}
			if len(args) > 1 {
				opts.Prompt = args[1]
			}
			if opts.Ref == "" && !f.IO.CanPrompt() {
				return usageErrorf("a session reference is required when not on a terminal; usage: %s", cmd.UseLine())
			}
			if runF != nil {
				return runF(opts)
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
	} else {
		project, err := f.Project()
		if err != nil {
			return err
		}
		// Every session the store holds for the project: a picker that
		// hid old sessions would lose them.
		sessions, err := st.Sessions(ctx, loom.SessionFilter{UserID: f.User(), ProjectID: project.ID})
		if err != nil {
			return err
		}
		if len(sessions) == 0 {
			return loom.Errorf(loom.ENOTFOUND, "no sessions in %s (%s)", project.Name, project.Root)
		}
		title := fmt.Sprintf("Sessions in %s", project.Name)
		if s, err = term.PickSession(ctx, f.IO, title, sessions, f.now()); err != nil {
			return err
		}
	}
	if f.JSON() {
		return writeJSON(f.IO.Out, s)
	}
	if opts.Prompt != "" {
		return runRun(ctx, &RunOptions{f: f, Prompt: opts.Prompt, Choice: sessionChoice{Resume: s.ID}})
	}
	return chatRun(ctx, &ChatOptions{f: f, Choice: sessionChoice{Resume: s.ID}})
}
