package chat

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// Piped, chat takes each line as a message or a slash command, prints
// the replies on stdout and the rest on stderr, and stops at /exit; a
// line that fails is reported and the next one runs, and the exit
// status still says one failed. Ctrl+C is chat's while it runs (it
// cancels the turn), and the command's again after. The store holds
// the session, renamed, with the one turn.
func TestChatPiped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.model.Enqueue(openaitest.Reply{Text: "Hi there."})
	ios, in, _, _ := term.Test()
	in.WriteString("hello\n\n/rename\n/rename retry backoff\n/usage\n/exit\nnot sent\n")
	var handlers []bool
	opts := &Options{Conversing: Conversing{IO: ios, CreateStore: w.createStore, OpenConversation: w.openConversation}, Now: time.Now, User: "local",
		OnInterrupt: func(h func()) { handlers = append(handlers, h != nil) },
		Choice:      command.SessionChoice{New: true}}
	err := Chat(t.Context(), opts)
	var se *command.SilentError
	if !errors.As(err, &se) || se.Code != command.ExitUsage {
		t.Errorf("chat ended with %v, want exit status %d for the bare /rename", err, command.ExitUsage)
	}
	if !slices.Equal(handlers, []bool{true, false}) {
		t.Errorf("Ctrl+C handlers set %v, want chat's, then none", handlers)
	}
	found := w.sessions(t)
	if len(found) != 1 || found[0].Title != "retry backoff" {
		t.Fatalf("sessions after chat: %+v", found)
	}
	s := found[0]
	if got, want := w.texts(t, s.ID), []string{"user: hello", "assistant: Hi there."}; !slices.Equal(got, want) {
		t.Errorf("stored %q, want %q", got, want)
	}
	if n := len(w.model.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once (nothing after /exit)", n)
	}
	out, errOut := cmdtest.Outputs(ios)
	if out != "Hi there.\n" {
		t.Errorf("stdout %q, want the reply", out)
	}
	for _, want := range []string{"session " + s.ID + "\n", "loom: usage: /rename TITLE\n", "renamed to \"retry backoff\"\n", "usage  ",
		"resume this session with: loom chat --resume " + s.ID + "\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr:\n%s\nwant %q", errOut, want)
		}
	}
}

// The command fills its options from its flags: -r takes the REF that
// follows it as an argument, and alone it needs a terminal for the
// picker; only one way of naming the session, and of showing history.
func TestNewCmdChatOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, NewCmdChat)
	if got.Choice != (command.SessionChoice{}) || got.Agent != (agent.Choice{}) || got.FullHistory || got.NoHistory || got.ShowThinking || got.NoResumeHint ||
		got.CreateStore == nil || got.OpenConversation == nil || got.OnInterrupt == nil {
		t.Errorf("options: %+v", got)
	}
	for _, args := range [][]string{{"-r", "flaky test"}, {"--resume", "flaky test"}, {"--resume=flaky test"}} {
		if got := cmdtest.Options(t, NewCmdChat, args...); got.Choice != (command.SessionChoice{Resume: "flaky test"}) {
			t.Errorf("%q: %+v", args, got.Choice)
		}
	}
	got = cmdtest.Options(t, NewCmdChat, "-c", "--profile", "terse", "--model", "gpt-test", "--full-history", "--show-thinking", "--no-resume-hint")
	if got.Choice != (command.SessionChoice{Continue: true}) || got.Agent != (agent.Choice{Model: "gpt-test", Profile: "terse"}) ||
		!got.FullHistory || got.NoHistory || !got.ShowThinking || !got.NoResumeHint {
		t.Errorf("-c --profile --model --full-history --show-thinking --no-resume-hint: %+v", got)
	}
	if got := cmdtest.Options(t, NewCmdChat, "--key", "notes:today", "--no-history"); got.Choice != (command.SessionChoice{Key: "notes:today"}) || !got.NoHistory {
		t.Errorf("--key --no-history: %+v", got)
	}
	if got := cmdtest.Options(t, NewCmdChat, "--new", "-n", "retry backoff"); got.Choice != (command.SessionChoice{New: true, Name: "retry backoff"}) {
		t.Errorf("--new -n: %+v", got.Choice)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdChat, "-r"), "-r needs a session REF when not on a terminal")
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdChat, "hello"), "takes no arguments")
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdChat, "-r", "flaky test", "hello"), "takes no arguments")
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdChat, "--new", "--key", "notes:today"), "use only one of --new, --continue, --resume and --key")
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdChat, "--full-history", "--no-history"), "use only one of --full-history and --no-history")
	cmdtest.Refused(t, cmdtest.Rejects(t, NewCmdChat, "-c", "-n", "retry backoff"), "--name titles a new session")
}
