package term

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loomhq/loom/internal/human"
)

// Text that loom prints comes from sessions it did not write: prompts,
// replies, tool output, titles, other agents' files. A terminal obeys the
// control characters in what it is sent (ESC ] 0 sets the window title,
// ESC ] 52 writes the clipboard, ESC [ moves the cursor and clears the
// screen, a C1 CSI does the same on some terminals), so stored text is
// printed with them escaped, in Go's notation: \x1b for a C0 control
// (including ESC and BEL), DEL or a byte that is not UTF-8, \u009b for a
// C1 control. Escape the data first, then colour it: loom's own styles
// are added after and still work.

// Sanitize returns stored text, which may span lines, safe to print on
// a terminal: newlines and tabs are kept (a CR LF pair is a newline);
// every other control character is escaped.
func Sanitize(s string) string {
	if isClean(s, true) {
		return s
	}
	return escape(strings.ReplaceAll(s, "\r\n", "\n"), true)
}

// SanitizeLine returns stored text safe to print as part of one line (a
// title, a table cell, an error): line breaks and tabs fold to single
// spaces, as human.OneLine does, and every other control character is
// escaped.
func SanitizeLine(s string) string {
	s = human.OneLine(s)
	if isClean(s, false) {
		return s
	}
	return escape(s, false)
}

// isClean reports whether s holds nothing to escape.
func isClean(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n' || c == '\t':
			if !multiline {
				return false
			}
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
			return false // a C1 control in UTF-8
		}
	}
	return utf8.ValidString(s)
}

func escape(s string, multiline bool) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, s[i])
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			writeHex(&b, byte(r))
		case r >= 0x80 && r <= 0x9f:
			b.WriteString(`\u00`)
			b.WriteString(strconv.FormatInt(int64(r), 16))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func writeHex(b *strings.Builder, c byte) {
	const digits = "0123456789abcdef"
	b.WriteString(`\x`)
	b.WriteByte(digits[c>>4])
	b.WriteByte(digits[c&0xf])
}

// SanitizingWriter returns a writer that escapes what is written to w as
// Sanitize does, for stored text written in pieces (a reply as it
// streams in, an export). A UTF-8 sequence cut between two writes is
// held until the next one completes it; Flush writes what is held.
func SanitizingWriter(w io.Writer) *Sanitizer { return &Sanitizer{w: w} }

// Sanitizer is the writer SanitizingWriter returns.
type Sanitizer struct {
	w    io.Writer
	held []byte
}

// Write escapes p and writes it, reporting all of p as written.
func (s *Sanitizer) Write(p []byte) (int, error) {
	buf := append(s.held, p...)
	s.held = nil
	cut := len(buf)
	// Hold back an incomplete UTF-8 sequence at the end (at most 3
	// bytes), and a CR that may be the first half of CR LF.
	for k := 1; k <= 3 && k <= len(buf); k++ {
		c := buf[len(buf)-k]
		if c < 0x80 {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(buf[len(buf)-k:]) {
				cut = len(buf) - k
			}
			break
		}
	}
	if cut > 0 && cut == len(buf) && buf[cut-1] == '\r' {
		cut--
	}
	s.held = bytes.Clone(buf[cut:])
	if cut == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(s.w, Sanitize(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what Write held back, escaped.
func (s *Sanitizer) Flush() error {
	if len(s.held) == 0 {
		return nil
	}
	held := s.held
	s.held = nil
	_, err := io.WriteString(s.w, Sanitize(string(held)))
	return err
}

// SanitizeJSON returns encoded JSON with the control characters that
// encoding/json leaves raw (DEL and the C1 controls) written as \u
// escapes: the same JSON values, and nothing a terminal acts on. They can
// only stand inside strings, where an escape means the same character.
func SanitizeJSON(b []byte) []byte {
	clean := true
	for i := 0; i < len(b) && clean; i++ {
		clean = b[i] != 0x7f && !(b[i] == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f)
	}
	if clean {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == 0x7f:
			out = append(out, `\u007f`...)
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f:
			out = append(out, `\u00`...)
			out = strconv.AppendInt(out, int64(b[i+1]), 16)
			i++
		default:
			out = append(out, b[i])
		}
	}
	return out
}
