package term

import (
	"os"

	xterm "golang.org/x/term"
)

// QuietInterrupt stops the terminal the streams are on from echoing
// control keys as they are typed (the "^C" a Ctrl+C leaves in the middle
// of a reply) and returns what puts it back. It does nothing off a
// terminal.
func (s *IOStreams) QuietInterrupt() (restore func()) {
	for _, v := range []any{s.In, s.Out, s.ErrOut} {
		if f, ok := v.(*os.File); ok && xterm.IsTerminal(int(f.Fd())) {
			return quietInterrupt(int(f.Fd()))
		}
	}
	return func() {}
}
