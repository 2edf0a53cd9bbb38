package command_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 10, "hello"},
		{"hello world", 5, "hell…"},
		{"héllo wörld", 4, "hél…"}, // runes, not bytes
		{"hello", 1, "h"},
		{"hello", 0, ""},
	} {
		if got := command.Truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// --json output is indented, and a C1 control or DEL in stored text
// reaches the terminal escaped, never raw.
func TestWriteJSONEscapesControls(t *testing.T) {
	var b bytes.Buffer
	if err := command.WriteJSON(&b, map[string]string{"title": "a\u009b2Jb\x7f"}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"title\": \"a\\u009b2Jb\\u007f\"\n}\n"
	if b.String() != want {
		t.Fatalf("WriteJSON wrote %q, want %q", b.String(), want)
	}
	if err := command.WriteJSON(&b, func() {}); err == nil {
		t.Fatal("a value JSON cannot hold was written")
	}
}

func TestJSONString(t *testing.T) {
	if got := command.JSONString(`say "hi"` + "\n"); got != `"say \"hi\"\n"` {
		t.Fatalf("JSONString = %s", got)
	}
}

func TestWriteMore(t *testing.T) {
	ios, _, out, _ := term.Test()
	command.WriteMore(ios, 0)
	if out.Len() != 0 {
		t.Fatalf("nothing left out, yet wrote %q", out)
	}
	command.WriteMore(ios, 1234)
	if got := out.String(); got != "… and 1,234 more (--limit 0 lists all)\n" {
		t.Fatalf("WriteMore(1234) = %q", got)
	}
}

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://alice:s3cret@db.example/loom?sslmode=disable", "postgres://alice:xxxxx@db.example/loom?sslmode=disable"},
		{"postgres://alice@db.example/loom", "postgres://alice@db.example/loom"},
		{"/home/alice/.local/share/loom/sessions.db", "/home/alice/.local/share/loom/sessions.db"},
		{"postgres://a:b@[::1", "postgres://a:b@[::1"}, // does not parse: as it is
	} {
		got := command.RedactURL(tc.in)
		if got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "s3cret") {
			t.Errorf("RedactURL(%q) shows the password", tc.in)
		}
	}
}
