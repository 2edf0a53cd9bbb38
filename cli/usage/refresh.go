package usage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// refresh brings in what the agents wrote since the last import before a
// report counts (unless --no-import), and says so in one line on stderr
// when it imported anything. It returns where it looked when no agent's
// location exists on this machine, for the line an empty report adds.
// An import that fails is a warning: the report goes on with what the
// store holds.
func refresh(ctx context.Context, opts *Options, noImport bool) []string {
	if noImport || opts.ImportAgents == nil {
		return nil
	}
	if _, err := opts.ReadStore(ctx); err != nil {
		// The report says what is wrong with the store.
		return nil
	}
	rep, err := opts.ImportAgents(ctx)
	ios := opts.IO
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			fmt.Fprintf(ios.ErrOut, "loom: warning: agents' new sessions were not imported (%s); the report counts what the store holds\n",
				term.SanitizeLine(err.Error()))
		}
		return nil
	}
	var tools, looked []string
	sessions, messages, failed, found := 0, 0, 0, 0
	for _, t := range rep.Tools {
		failed += t.FilesFailed
		found += t.RootsFound
		looked = append(looked, t.Roots...)
		if t.SessionsNew+t.SessionsGrown+t.MessagesAdded+t.ToolsUpdated > 0 {
			tools = append(tools, t.Tool)
			sessions += t.SessionsNew + t.SessionsGrown
			messages += t.MessagesAdded
		}
	}
	if len(tools) > 0 {
		fmt.Fprintf(ios.ErrOut, "Imported %s (%s) from %s first; --no-import skips this.\n",
			human.Plural(sessions, "new or grown session"), human.Plural(messages, "message"), strings.Join(tools, ", "))
	}
	if failed > 0 {
		fmt.Fprintf(ios.ErrOut, "loom: warning: %s of the agents could not be read; loom session import --from all says which\n",
			human.Plural(failed, "file"))
	}
	if found > 0 {
		return nil
	}
	return looked
}

// writeLooked says, under an empty report, that no agent's history was
// found and where loom looked.
func writeLooked(opts *Options, looked []string) {
	if len(looked) == 0 {
		return
	}
	// Every agent's locations would be a screenful: the count, and
	// where to see them.
	fmt.Fprintf(opts.IO.ErrOut, "No agent history on this machine: loom looked in %s where the agents keep sessions (loom session import --from list shows them).\n",
		human.Plural(len(looked), "place"))
}
