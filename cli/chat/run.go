package chat

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

// RunOptions are the options of `loom run`.
type RunOptions struct {
	Conversing
	JSON bool

	Prompt string
	Choice command.SessionChoice
	Agent  agent.Choice
	// NoResumeHint leaves out how to resume the session, printed on exit.
	NoResumeHint bool
}

// NewRunOptions returns run's options filled from f; JSON is filled when
// the command runs.
func NewRunOptions(inv *command.Invocation) *RunOptions {
	return &RunOptions{Conversing: newConversing(inv)}
}

// NewCmdRun builds loom run. runF, when not nil, is called with the
// options instead of running the command (for tests).
func NewCmdRun(inv *command.Invocation, runF func(*RunOptions) error) *cobra.Command {
	opts := NewRunOptions(inv)
	cmd := &cobra.Command{
		Use:   "run PROMPT",
		Short: "Send one prompt and stream the reply",
		Long: `Send one prompt to the agent and stream its reply to stdout.

By default (or with --new) the prompt starts a new session; -c continues this project's
most recent session, --resume REF a given one, --key KEY the session with
that key (created if missing, as a session of this project). Once the
prompt is stored, "session <id>" of the session that holds it is printed
to stderr, and on exit how to resume it (--no-resume-hint leaves that
out). A PROMPT of - reads the prompt from
stdin. With --json, the stored assistant messages are printed as JSON
instead of the streamed text.

A model that sends nothing for stream_idle_timeout (default 60s), or a
turn longer than turn_timeout (default 10m), fails the run (exit 1); the
prompt stays stored. LOOM_STREAM_IDLE_TIMEOUT and LOOM_TURN_TIMEOUT set
them (Go durations: 90s, 5m).`,
		Example: `  loom run "summarise the README"
  git diff | loom run -
  loom run -c "and now the tests"
  loom run --resume 0196a3b2 --json "list the files you read"
  loom run --key notes:today --no-resume-hint "add: buy milk"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return command.UsageErrorf("run takes one PROMPT (or - to read it from stdin); usage: %s", cmd.UseLine())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Prompt = args[0]
			if n := countTrue(opts.Choice.New, opts.Choice.Continue, opts.Choice.Resume != "", opts.Choice.Key != ""); n > 1 {
				return command.UsageErrorf("use only one of --new, --continue, --resume and --key")
			}
			if err := opts.Choice.Check(); err != nil {
				return err
			}
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Choice.New, "new", false, "start a new session (the default; as bare loom takes it)")
	cmd.Flags().BoolVarP(&opts.Choice.Continue, "continue", "c", false, "continue this project's most recent session")
	cmd.Flags().StringVarP(&opts.Choice.Resume, "resume", "r", "", "continue the session `REF` (id, prefix, key or title)")
	cmd.Flags().StringVar(&opts.Choice.Key, "key", "", "use the session with this `KEY`, creating it if missing")
	cmd.Flags().StringVarP(&opts.Choice.Name, "name", "n", "", "title of the new session")
	cmd.Flags().StringVar(&opts.Agent.Model, "model", "", "model to use (default: the session's, else the configured one)")
	cmd.Flags().StringVar(&opts.Agent.Profile, "profile", "", "profile (system prompt) to use")
	cmd.Flags().BoolVar(&opts.NoResumeHint, "no-resume-hint", false, "do not print how to resume on exit")
	return cmd
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// Run sends opts' prompt and streams the reply.
func Run(ctx context.Context, opts *RunOptions) error {
	prompt := opts.Prompt
	if prompt == "-" {
		b, err := io.ReadAll(opts.IO.In)
		if err != nil {
			return fmt.Errorf("read the prompt from stdin: %w", err)
		}
		// A prompt piped from echo or a file ends with a newline that is
		// not part of what the user means to say.
		prompt = strings.TrimRight(string(b), "\r\n")
	}
	if strings.TrimSpace(prompt) == "" {
		return command.UsageErrorf("the prompt is empty")
	}
	st, err := opts.CreateStore(ctx)
	if err != nil {
		return err
	}
	conv, err := opts.OpenConversation(ctx, st, opts.Choice, opts.Agent, false)
	if err != nil {
		return err
	}
	defer conv.Close(ctx)
	// Ctrl+C ends the run; the terminal is not to print "^C" into the
	// reply.
	defer opts.IO.QuietInterrupt()()
	p := newTurnPrinter(opts.IO, false)
	// "session <id>" names the session once the prompt is stored in it
	// and the model answers: until then the session may never exist
	// (another process may take its key first, and the turn goes on in
	// that one's, or is refused; a provider that cannot be reached
	// leaves no session), or it is named after the turn if it does.
	stored, announced := "", false
	announce := func() {
		if stored != "" && !announced {
			announced = true
			p.note(fmt.Sprintf("session %s", stored))
		}
	}
	emit := func(e agent.Event) {
		if e.Kind == agent.EventStored {
			stored = e.SessionID
			return
		}
		announce()
		if !opts.JSON {
			p.event(e)
		}
	}
	if !opts.JSON {
		p.begin()
	}
	res, err := conv.Turn(ctx, prompt, emit)
	if conv.Session().MessageCount > 0 {
		announce()
	}
	if !opts.JSON {
		p.end()
	}
	if s := conv.Session(); s.MessageCount > 0 && !conv.Pending() && !opts.NoResumeHint {
		// Also after a failed turn: its prompt is stored, and this is
		// how to try again.
		opts.IO.ResumeHint("loom run --resume " + s.ID + " PROMPT")
	}
	if err != nil && agent.IsCancelled(err) && ctx.Err() != nil {
		fmt.Fprintln(opts.IO.ErrOut, interruptedTurn)
		return &command.SilentError{Code: command.ExitInterrupted}
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, res.Messages)
	}
	return nil
}

// Conversing is what loom chat and loom run both work with: the
// streams, the store, and the conversation a choice names. Their options
// hold it.
type Conversing struct {
	IO *term.IOStreams
	// CreateStore opens the store, creating it if missing.
	CreateStore func(context.Context) (loom.Engine, error)
	// OpenConversation opens the conversation a choice names (see
	// command.OpenConversation).
	OpenConversation func(ctx context.Context, st loom.Store, c command.SessionChoice, ag agent.Choice, current bool) (*agent.Conversation, error)
}

// newConversing fills a Conversing from the invocation, with
// command.OpenConversation in this run.
func newConversing(inv *command.Invocation) Conversing {
	return Conversing{
		IO:          inv.IO,
		CreateStore: inv.CreateStore,
		OpenConversation: func(ctx context.Context, st loom.Store, c command.SessionChoice, ag agent.Choice, current bool) (*agent.Conversation, error) {
			return command.OpenConversation(ctx, inv, st, c, ag, current)
		},
	}
}
