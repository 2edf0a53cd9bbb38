package chat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/loomhq/loom/internal/testkit/termtest"
	"github.com/loomhq/loom/openai/openaitest"
)

// wholeWords fails unless the terminal's scrollback holds sentence with
// every word whole: the words may wrap onto the next line, but none is
// broken in two by the terminal.
func wholeWords(t *testing.T, p *termtest.Term, sentence string) {
	t.Helper()
	history := p.History()
	if !strings.Contains(strings.Join(strings.Fields(history), " "), sentence) {
		t.Fatalf("the terminal does not show %q in whole words:\n%s", sentence, history)
	}
}

// /rewind without a turn number, on a real 80×24 terminal, lists the
// turns and asks which to keep: the digits typed show, Enter answers,
// an answer out of range asks again, and Ctrl+C, Esc or Ctrl+D give up
// the rewind and leave the chat as it was. The confirmation breaks no
// word at 80 columns, and chatting goes on in the rewound session.
func TestRewindChooserOnTerminal(t *testing.T) {
	t.Parallel()
	fx := clitest.NewAgentFixture(t)
	fx.Srv.Enqueue(
		openaitest.Reply{Text: "answer one"},
		openaitest.Reply{Text: "answer two"},
		openaitest.Reply{Text: "answer three"},
		openaitest.Reply{Text: "answer four"},
		openaitest.Reply{Text: "answer after the rewind"},
	)
	fx.ExtraEnv = fx.Env
	p := fx.StartPTYSize(t, 80, 24, "chat", "--new")
	p.WaitFor(t, "›")
	for _, q := range []string{"question one", "question two", "question three", "question four"} {
		p.Send(q + "\r")
		p.WaitFor(t, "answer "+strings.TrimPrefix(q, "question "))
		p.WaitPrompt(t, "›")
	}

	// Giving up, three ways: the session keeps its four turns.
	for _, key := range []struct{ name, key string }{{"Ctrl+C", "\x03"}, {"Esc", "\x1b"}, {"Ctrl+D", "\x04"}} {
		asked := strings.Count(p.Output(), "Keep turns up to which turn? [1-3]")
		p.Send("/rewind\r")
		waitCount(t, p, "Keep turns up to which turn? [1-3]", asked+1)
		p.Send("2")
		clitest.WaitScreen(t, p, "Keep turns up to which turn? [1-3] 2")
		p.Send(key.key)
		p.WaitPrompt(t, "›")
		if strings.Contains(p.Output(), "rewound") {
			t.Fatalf("%s at the turn prompt rewound the session:\n%s", key.name, p.Output())
		}
	}

	p.Send("/rewind\r")
	p.WaitFor(t, "Keep turns up to which turn? [1-3]")
	clitest.WaitScreen(t, p, "Keep turns up to which turn? [1-3]")
	p.Send("9\r")
	p.WaitFor(t, "Please give a number from 1 to 3.")
	// An arrow key edits the answer; it does not give it up.
	p.Send("2")
	clitest.WaitScreen(t, p, "Keep turns up to which turn? [1-3] 2")
	p.Send("\x1b[D")
	p.Send("\r")
	p.WaitFor(t, "rewound to the end of turn 2")
	p.WaitPrompt(t, "›")
	wholeWords(t, p, "rewound to the end of turn 2; turns 3–4 are kept in")

	p.Send("question after\r")
	p.WaitFor(t, "answer after the rewind")
	p.WaitPrompt(t, "›")
	var texts []string
	for _, w := range fx.LastRequest(t) {
		if w.Role == "user" {
			texts = append(texts, w.Content)
		}
	}
	if got := strings.Join(texts, "|"); got != "question one|question two|question after" {
		t.Fatalf("after rewinding to turn 2 the model saw %q", got)
	}
	p.Leave(t, "›")
}

// waitCount waits until the program has written want n times.
func waitCount(t *testing.T, p *termtest.Term, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(termtest.Timeout)
	for strings.Count(p.Output(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q to be written %d times; the terminal shows:\n%s", want, n, p.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
