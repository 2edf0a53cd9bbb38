package term

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
)

// PromptLine asks question on the terminal and returns the answer without
// its line ending. Reading happens aside so that an interrupt ends the
// wait at once.
func PromptLine(ctx context.Context, ios *IOStreams, question string) (string, error) {
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
