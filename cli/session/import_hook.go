package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/opencode"
)

// hookInput is what a tool passes its hook: Claude Code and Gemini CLI
// name the session's file (transcript_path), Codex's notify program
// names the thread ("thread-id").
type hookInput struct {
	TranscriptPath string `json:"transcript_path"`
	SessionID      string `json:"session_id"`
	HookEventName  string `json:"hook_event_name"`
	Type           string `json:"type"`
	ThreadID       string `json:"thread-id"`
	// LastAssistantMessage is the text of the reply that ended the turn
	// (Claude Code's Stop).
	LastAssistantMessage string `json:"last_assistant_message"`
}

// replyWait bounds how long a Claude Code Stop hook waits for the reply
// it names to reach the session file.
const replyWait = 3 * time.Second

// maxHookInput bounds the JSON a hook passes; Codex's holds the turn's
// prompts and last reply.
const maxHookInput = 4 << 20

// importHook imports the one session a tool's hook names: the tool's
// hook JSON comes on stdin, or as the one argument (Codex's notify).
func importHook(ctx context.Context, opts *ImportOptions) error {
	var format importer.Format
	for _, fm := range opts.Formats {
		if fm.Tool() == opts.Hook && fm.Tool() != opencode.Tool {
			format = fm
		}
	}
	if format == nil {
		return command.UsageErrorf("--hook %q: want claude-code, codex or gemini", opts.Hook)
	}
	var raw []byte
	switch len(opts.Files) {
	case 0:
		b, err := command.ReadHookInput(ctx, opts.IO.In, maxHookInput)
		if err != nil {
			return err
		}
		raw = b
	case 1:
		raw = []byte(opts.Files[0])
	default:
		return command.UsageErrorf("--hook takes the hook's JSON on stdin or as one argument, not %d", len(opts.Files))
	}
	if len(raw) > maxHookInput {
		return fmt.Errorf("the hook's input is over %d MB", maxHookInput>>20)
	}
	var in hookInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("the hook's input is not %s hook JSON: %w", opts.Hook, err)
	}
	path := in.TranscriptPath
	if path == "" {
		id := in.ThreadID
		if id == "" {
			id = in.SessionID
		}
		finder, ok := format.(importer.Finder)
		if !ok || id == "" {
			return fmt.Errorf("the hook's input names no session file (transcript_path)")
		}
		roots := format.Roots(opts.Getenv, opts.Home())
		p, err := finder.FindSession(ctx, roots, id)
		if err != nil {
			return err
		}
		if p == "" {
			return fmt.Errorf("%s session %s: no file found under %v", opts.Hook, id, roots)
		}
		path = p
	}
	if !filepath.IsAbs(path) {
		return fmt.Errorf("the hook's transcript_path %q is not an absolute path", path)
	}
	if w, ok := format.(importer.ReplyWaiter); ok && in.LastAssistantMessage != "" {
		// Claude Code fires Stop before it writes the reply to the
		// file: wait for it, so that the turn is imported whole.
		w.AwaitReply(ctx, path, in.LastAssistantMessage, replyWait)
	}
	st, err := opts.CreateStore(ctx)
	if err != nil {
		return err
	}
	rep, err := newImporter(opts, st).Run(ctx, []importer.Target{{Format: format, Roots: []string{filepath.Clean(path)}, Explicit: true}})
	if err != nil {
		return err
	}
	opts.AdoptImported(ctx, st)
	if opts.JSON {
		if err := command.WriteJSON(opts.IO.Out, rep); err != nil {
			return err
		}
	}
	return failedFiles(rep)
}

// hookError is err as a hook's caller should see it: a mistake in how
// the command was called exits 1 like any failure, since Claude Code
// takes exit status 2 from a Stop hook as a request to keep going.
func hookError(err error) error {
	var ue *command.UsageError
	if errors.As(err, &ue) {
		return errors.New(ue.Msg)
	}
	return err
}
