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

// HoldTypeAhead keeps what is typed while a reply streams for the next
// prompt instead of echoing it into the reply: the terminal on standard
// input stops echoing and editing lines, and keeps Enter as the key it
// is, until the returned func puts it back. The keys wait in the
// terminal's queue; the next ReadInput reads them, Enter included. It
// does nothing off a terminal.
func (s *IOStreams) HoldTypeAhead() (restore func()) {
	if f, ok := s.In.(*os.File); ok && xterm.IsTerminal(int(f.Fd())) {
		return holdTypeAhead(int(f.Fd()))
	}
	return func() {}
}
