package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"

	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/human"
)

// Truncate cuts s to n runes, marking the cut.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return string(r[:n])
	}
	return string(r[:n-1]) + "…"
}

// WriteJSON prints v as indented JSON, with DEL and C1 controls escaped
// (term.SanitizeJSON): --json output on a terminal is as safe as a table.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(term.SanitizeJSON(buf.Bytes()))
	return err
}

// JSONString quotes s as a JSON string.
func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// WriteMore says under a table on a terminal how many rows --limit left
// out: "… and 27 more (--limit 0 lists all)"; nothing when none were.
func WriteMore(ios *term.IOStreams, more int) {
	if more > 0 {
		fmt.Fprintln(ios.Out, ios.ColorScheme().Gray(fmt.Sprintf("… and %s more (--limit 0 lists all)", human.Count(int64(more)))))
	}
}

// RedactURL hides a password in a database URL.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
