package term

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	xterm "golang.org/x/term"
)

// PromptLine asks question and returns the answer without its line
// ending. On a terminal the answer is read as the chat reads a message,
// whatever mode the terminal was left in (a chat holding type-ahead has
// it neither echo nor edit lines): what is typed shows, Enter answers,
// and Ctrl+C or Esc give up (ErrPromptAborted), Ctrl+D on an empty line
// too (ErrNoAnswer). Elsewhere it reads a line; reading happens aside so
// that an interrupt ends the wait at once.
func PromptLine(ctx context.Context, ios *IOStreams, question string) (string, error) {
	if f, ok := ios.In.(*os.File); ok && ios.IsStdinTTY() && xterm.IsTerminal(int(f.Fd())) {
		return promptTerminal(ctx, ios, question)
	}
	fmt.Fprint(ios.Out, question)
	if ios.inReader == nil {
		ios.inReader = bufio.NewReader(ios.In)
	}
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		line, err := ios.inReader.ReadString('\n')
		ch <- answer{line, err}
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(ios.Out)
		return "", ctx.Err()
	case a := <-ch:
		if a.err != nil && (a.err != io.EOF || a.line == "") {
			if a.err == io.EOF {
				fmt.Fprintln(ios.Out)
				return "", ErrNoAnswer
			}
			return "", a.err
		}
		return strings.TrimRight(a.line, "\r\n"), nil
	}
}

// promptTerminal is PromptLine on a terminal. A question too long for
// one line with room to answer is wrapped at words, its last line the
// prompt.
func promptTerminal(ctx context.Context, ios *IOStreams, question string) (string, error) {
	width := ios.TerminalWidth()
	if width <= 0 {
		width = 80
	}
	lines := strings.Split(wordwrap(strings.TrimRight(question, " "), max(width-minAnswerWidth, 20)), "\n")
	for _, l := range lines[:len(lines)-1] {
		fmt.Fprintln(ios.Out, l)
	}
	a, err := readAnswer(ctx, ios, lines[len(lines)-1]+" ")
	switch {
	case errors.Is(err, io.EOF):
		return "", ErrNoAnswer
	case errors.Is(err, ErrInputAborted):
		return "", ErrPromptAborted
	}
	return a, err
}

// minAnswerWidth is the room a question on a terminal leaves on its last
// line for the answer.
const minAnswerWidth = 12

// ErrPromptAborted is returned by PromptLine when Ctrl+C or Esc gives up
// the question on a terminal. It is an interruption (context.Canceled)
// to a command that does not handle it.
var ErrPromptAborted = fmt.Errorf("%w: %w", ErrInputAborted, context.Canceled)

// ErrNoAnswer is returned when input ends before the question is
// answered.
var ErrNoAnswer = fmt.Errorf("no answer given")

// Confirm asks a yes/no question whose default is no.
func Confirm(ctx context.Context, ios *IOStreams, question string) (bool, error) {
	a, err := PromptLine(ctx, ios, question+" [y/N] ")
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(a)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
