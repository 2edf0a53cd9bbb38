package term

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const hostile = "A\x1b]0;pwned\x07B\x1b[2JC\x1b]52;c;cHduZWQ=\x07D\u009b31mE"

func TestSanitize(t *testing.T) {
	tests := []struct {
		in, text, line string
	}{
		{"plain text, ünïcode 日本", "plain text, ünïcode 日本", "plain text, ünïcode 日本"},
		{hostile, `A\x1b]0;pwned\x07B\x1b[2JC\x1b]52;c;cHduZWQ=\x07D\u009b31mE`, `A\x1b]0;pwned\x07B\x1b[2JC\x1b]52;c;cHduZWQ=\x07D\u009b31mE`},
		{"two\nlines\tand a tab", "two\nlines\tand a tab", "two lines and a tab"},
		{"crlf\r\nline", "crlf\nline", "crlf line"},
		{"lone\rcarriage", `lone\x0dcarriage`, "lone carriage"},
		{"del\x7f nul\x00 bs\x08", `del\x7f nul\x00 bs\x08`, `del\x7f nul\x00 bs\x08`},
		{"bad \xff\x9b utf-8", `bad \xff\x9b utf-8`, `bad \xff\x9b utf-8`},
		{"nel\u0085 csi\u009b", `nel\u0085 csi\u009b`, `nel\u0085 csi\u009b`},
	}
	for _, tc := range tests {
		if got := Sanitize(tc.in); got != tc.text {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := SanitizeLine(tc.in); got != tc.line {
			t.Errorf("SanitizeLine(%q) = %q, want %q", tc.in, got, tc.line)
		}
	}
}

// A reply streamed in pieces is escaped as the whole would be, however
// it is cut: inside a UTF-8 sequence, between CR and LF, inside an
// escape sequence.
func TestSanitizingWriter(t *testing.T) {
	whole := "é 日本\r\n" + hostile + " end\r"
	for cut := 0; cut <= len(whole); cut++ {
		var out bytes.Buffer
		w := SanitizingWriter(&out)
		w.Write([]byte(whole[:cut]))
		w.Write([]byte(whole[cut:]))
		w.Flush()
		if want := Sanitize(whole); out.String() != want {
			t.Fatalf("cut at %d: %q, want %q", cut, out.String(), want)
		}
	}
}

func TestSanitizeJSON(t *testing.T) {
	b, _ := json.Marshal(map[string]string{"t": hostile + "\x7f"})
	got := SanitizeJSON(b)
	if bytes.ContainsAny(got, "\x1b\x07\x7f") || bytes.Contains(got, []byte("\u009b")) {
		t.Fatalf("control characters left: %q", got)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["t"] != hostile+"\x7f" {
		t.Fatalf("not the same JSON: %q (%v)", got, err)
	}
	if clean := []byte(`{"a":"b"}`); !bytes.Equal(SanitizeJSON(clean), clean) {
		t.Fatal("clean JSON changed")
	}
}

// A table cell is one line without escape sequences, on a terminal (with
// loom's colours) and piped.
func TestTableEscapesCells(t *testing.T) {
	for _, tty := range []bool{true, false} {
		ios, _, out, _ := Test()
		ios.SetStdoutTTY(tty)
		tp := NewTable(ios)
		tp.Header("A", "B")
		tp.AddField("x\ny "+hostile, ios.ColorScheme().Bold)
		tp.AddField("z", nil)
		tp.EndRow()
		if err := tp.Render(); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if strings.ContainsAny(s, "\x07") || strings.Contains(s, "\x1b]") || strings.Contains(s, "\u009b") || strings.Count(s, "\n") != map[bool]int{true: 2, false: 1}[tty] {
			t.Fatalf("tty %v: %q", tty, s)
		}
		if tty && !strings.Contains(s, "\x1b[1m") {
			t.Fatalf("colour lost: %q", s)
		}
	}
}

func TestRenderMarkdownEscapes(t *testing.T) {
	out := RenderMarkdown("**bold** "+hostile+"\n\n```\n"+hostile+"\n```\n", 80)
	if strings.Contains(out, "\x07") || strings.Contains(out, "\x1b]") || strings.Contains(out, "\u009b") || strings.Contains(out, "\x1b[2J") {
		t.Fatalf("escape sequences rendered: %q", out)
	}
	if !strings.Contains(out, "\x1b[1mbold\x1b[m") || !strings.Contains(out, `\x1b]0;pwned`) {
		t.Fatalf("styles or escaped text missing: %q", out)
	}
}
