package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/handoff"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/internal/human"
)

func newCmdSessionRestoreTo(inv *command.Invocation, runF func(*HandoffOptions) error) *cobra.Command {
	opts := &HandoffOptions{
		IO: inv.IO, Formats: inv.Formats, ReadSession: inv.ReadSession, AbsPath: inv.AbsPath,
		Getenv: inv.Getenv, Home: inv.Home, Now: inv.TimeNow, ReadStore: inv.ReadStore, User: inv.User,
	}
	cmd := &cobra.Command{
		Use:   "restore-to AGENT ID",
		Short: "Put a session loom holds back into its agent's own store, under its own id",
		Long: `Write a session imported from AGENT back where AGENT keeps its sessions,
under the id AGENT gave it, so that AGENT resumes it by that id (claude
--resume ID, codex resume ID, gemini --resume ID …) after it deleted
it. ID is AGENT's id of the session or a prefix of it of 4 characters
or more (the short id Gemini CLI shows), or any loom reference to it
(id, prefix, key, title). AGENT is one of the agents loom writes sessions of:
` + "%s" + `.

The session is written in AGENT's own format as loom session handoff
writes it (docs/handoff.md): every prompt, reply and tool call with its
result. A session AGENT still has is left alone. Once AGENT goes on with
it, importing it adds what AGENT added to the same session in loom.

Nothing is redacted: the session goes back, on this machine, to the
agent whose own history it was (docs/durability.md).`,
		Example: `  loom session restore-to claude-code 3f1c9a52-0d6e-4b8e-9a47-2c5d8e1f6b20
  loom session restore-to codex 019c49c6
  loom session restore-to gemini "flaky test" --dir ~/src/api --json`,
		Args: command.ArgsBetween(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.To, opts.Ref, opts.JSON = args[0], args[1], inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return restoreToRun(cmd.Context(), opts)
		},
	}
	cmd.Long = fmt.Sprintf(cmd.Long, strings.Join(restoreTools(inv.Formats), ", "))
	cmd.Flags().StringVar(&opts.Dir, "dir", "", "project `DIR` the agent resumes it in (default: the session's project root)")
	return cmd
}

// restoreTools are the agents a session can be restored to.
func restoreTools(formats []importer.Format) []string {
	return handoffTools(formats)
}

func restoreToRun(ctx context.Context, opts *HandoffOptions) error {
	f := writerOf(opts.Formats, opts.To)
	if f == nil {
		return command.UsageErrorf("unknown agent %q: want %s", opts.To, strings.Join(restoreTools(opts.Formats), ", "))
	}
	st, s, err := opts.ReadSession(ctx, opts.Ref)
	if loom.ErrorCode(err) == loom.ENOTFOUND {
		// The agent's own id of it: its key, or the start of it.
		if st2, s2, err2 := opts.ReadSession(ctx, f.Tool()+":"+opts.Ref); err2 == nil {
			st, s, err = st2, s2, nil
		} else if id, perr := agentIDPrefix(ctx, opts, f.Tool()); perr != nil {
			err = perr
		} else if id != "" {
			st, s, err = opts.ReadSession(ctx, id)
		}
	}
	if err != nil {
		return err
	}
	dir, err := dirFlag(opts.AbsPath, opts.Dir)
	if err != nil {
		return err
	}
	rep, err := importer.Restore(ctx, st, s, f, handoff.Options{Dir: dir, Env: opts.Getenv, Home: opts.Home(), Now: opts.Now()})
	if loom.ErrorCode(err) == loom.EINVALID {
		msg := strings.Replace(loom.ErrorMessage(err), "; name one", "; name one with --dir", 1)
		if strings.Contains(msg, "still has session") {
			return fmt.Errorf("%s", msg)
		}
		return command.UsageErrorf("%s", msg)
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, rep)
	}
	out := opts.IO.Out
	fmt.Fprintf(out, "Restored %s to %s as %s: %s.\n", command.SessionLabel(s), rep.Tool, rep.SessionID, human.Plural(rep.Messages, "message"))
	fmt.Fprintf(out, "Wrote %s\n", rep.Path)
	fmt.Fprintf(out, "Resume it with:\n  %s\n", opts.IO.ColorScheme().Bold(rep.Resume))
	return nil
}

// agentIDPrefix finds the session of tool whose own id (its key's tail)
// starts with opts.Ref, as the short ids agents show do (Gemini CLI's
// eight characters): loom's id of it, "" when none matches, an
// ambiguous error when several do.
func agentIDPrefix(ctx context.Context, opts *HandoffOptions, tool string) (string, error) {
	ref := strings.ToLower(strings.TrimSpace(opts.Ref))
	if len(ref) < 4 || !loom.IsIDPrefix(ref) || opts.ReadStore == nil {
		return "", nil
	}
	st, err := opts.ReadStore(ctx)
	if err != nil {
		return "", err
	}
	ss, err := st.Sessions(ctx, loom.SessionFilter{UserID: opts.User(), Surface: tool, Text: ref, Archived: loom.WithArchived, Limit: 100})
	if err != nil {
		return "", err
	}
	var found []*loom.Session
	for _, s := range ss {
		if strings.HasPrefix(strings.ToLower(s.Key), tool+":"+ref) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0].ID, nil
	}
	return "", loom.Ambiguous(opts.Ref, found)
}
