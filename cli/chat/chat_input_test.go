package chat_test

import (
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/openai/openaitest"
)

// On a terminal, a paste of several lines is one message, and Alt+Enter
// or a \ ending the line starts a new line instead of sending.
func TestChatMultiLineInputOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "pasted ok"}, openaitest.Reply{Text: "alt ok"}, openaitest.Reply{Text: "backslash ok"})
	fx.ExtraEnv = fx.Env
	p := fx.StartPTY(t, "chat", "--new")
	p.WaitFor(t, "›")
	steps := []struct{ keys, reply, want string }{
		{"\x1b[200~first line\nsecond line\x1b[201~\r", "pasted ok", "first line\nsecond line"},
		{"one\x1b\rtwo\r", "alt ok", "one\ntwo"},
		{"three\\\rfour\r", "backslash ok", "three\nfour"},
	}
	for i, s := range steps {
		// Keys typed before the prompt is back reach the terminal in its
		// line mode, where Enter is a newline: wait for the prompt.
		p.WaitPrompt(t, "›")
		p.Send(s.keys)
		p.WaitFor(t, s.reply)
		fx.WaitRequests(t, i+1)
		if n := len(fx.Srv.Requests()); n != i+1 {
			t.Fatalf("%q made %d requests, want %d", s.keys, n, i+1)
		}
		if got := fx.LastUserText(t); got != s.want {
			t.Fatalf("%q sent %q, want %q", s.keys, got, s.want)
		}
	}
	p.Leave(t, "›")
}

// A prompt longer than the terminal is wide wraps, and stays whole on
// the screen while typed and after it is sent.
func TestChatLongPromptWrapsOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(openaitest.Reply{Text: "wrapped ok"})
	fx.ExtraEnv = fx.Env
	p := fx.StartPTYSize(t, 50, 30, "chat", "--new")
	p.WaitFor(t, "›")
	prompt := "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango"
	p.Send(prompt)
	clitest.WaitScreen(t, p, "alpha bravo", "sierra tango")
	if !strings.Contains(strings.Join(strings.Fields(p.Screen()), " "), prompt) {
		t.Fatalf("the prompt being typed is not shown whole:\n%s", p.Screen())
	}
	p.Send("\r")
	clitest.WaitScreen(t, p, "wrapped ok")
	if got := strings.Join(strings.Fields(p.Screen()), " "); !strings.Contains(got, "› "+prompt) {
		t.Fatalf("the prompt sent is not shown whole:\n%s", p.Screen())
	}
	if got := fx.LastUserText(t); got != prompt {
		t.Fatalf("sent %q", got)
	}
	p.Leave(t, "›")
}
