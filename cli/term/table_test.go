package term

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// Cells cut to fit keep what tells their rows apart: where cutting the
// end would make two different texts look alike, the middle goes.
func TestTableCutKeepsRowsApart(t *testing.T) {
	ios, _, out, _ := Test()
	ios.SetStdoutTTY(true)
	ios.SetColorEnabled(false)
	ios.SetWidth(40)
	tp := NewTable(ios)
	tp.Header("ID", "TITLE", "MODEL")
	tp.Flex(1, 2)
	for _, r := range [][]string{
		{"01a1", "hello there, please answer the question", "claude-sonnet-4-5"},
		{"01a2", "hello there, please answer the question (rewound)", "claude-sonnet-4"},
		{"01a3", "short", "gpt-4o"},
	} {
		for _, c := range r {
			tp.AddField(c, nil)
		}
		tp.EndRow()
	}
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("table:\n%s", out)
	}
	title := func(l string) string { return strings.TrimSpace(l[6:24]) }
	if title(lines[1]) == title(lines[2]) {
		t.Fatalf("two different titles look the same:\n%s", out)
	}
	if !strings.Contains(lines[2], "(rewound)") && !strings.Contains(lines[2], "ewound)") {
		t.Fatalf("the end that tells the rows apart was cut:\n%s", out)
	}
	for _, l := range lines {
		if len([]rune(l)) > 40 {
			t.Fatalf("a line wider than the terminal:\n%s", out)
		}
	}
}

func TestTruncateMiddle(t *testing.T) {
	for _, tc := range []struct {
		in   string
		w    int
		want string
	}{
		{"claude-sonnet-4-5", 11, "claud…t-4-5"},
		{"short", 10, "short"},
		{"abcdefghij", 5, "ab…ij"},
		{"abcdefghij", 6, "abc…ij"},
		// A cut inside a wide character leaves it out: the result is
		// never wider than asked (it was one cell over, and a table's
		// padding went negative).
		{"01990d を最新の状態にアップデートしてください", 8, "0199…い"},
		{"01990d を最新の状態にアップデートしてください", 12, "01990d…さい"},
	} {
		if got := truncateMiddle(tc.in, tc.w); got != tc.want || ansi.StringWidth(got) > tc.w {
			t.Errorf("truncateMiddle(%q, %d) = %q, want %q", tc.in, tc.w, got, tc.want)
		}
	}
}

func TestWrapWords(t *testing.T) {
	items := []string{"1,495 in", "95,668 out", "19,147,612 cache read, 624,089 cache write", "$13.88", "360 calls"}
	got := WrapWords(items, " · ", 73)
	want := []string{"1,495 in · 95,668 out · 19,147,612 cache read, 624,089 cache write", "$13.88 · 360 calls"}
	if !slices.Equal(got, want) {
		t.Fatalf("WrapWords = %q, want %q", got, want)
	}
	if got := WrapWords(items, " · ", 200); len(got) != 1 {
		t.Fatalf("a wide terminal wrapped: %q", got)
	}
}

// A list column is cut by whole names, counting those left out, and the
// column before it gives way before a name is cut.
func TestTableListsCutByWholeNames(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"opus-4-6, haiku-4-5", 40, "opus-4-6, haiku-4-5"},
		{"opus-4-6, haiku-4-5", 18, "opus-4-6 +1"},
		{"opus-4-6, haiku-4-5 +1", 21, "opus-4-6 +2"},
		{"opus-4-6, haiku-4-5, sonnet-4 +3", 25, "opus-4-6, haiku-4-5 +4"},
		{"gpt-5.3-codex", 0, "gpt-5.3-codex"},
		{"opus-4-6, haiku-4-5", 0, "opus-4-6 +1"},
	} {
		if got := shrinkList(tc.in, tc.width); got != tc.want {
			t.Errorf("shrinkList(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}

	ios, _, out, _ := Test()
	ios.SetStdoutTTY(true)
	ios.SetColorEnabled(false)
	ios.SetWidth(44)
	tp := NewTable(ios)
	tp.Header("TITLE", "MODELS", "COST")
	tp.Lists(1)
	tp.Flex(1, 0)
	for _, r := range [][]string{
		{"Implement the retry package", "gpt-5.3-codex, haiku-4-5", "$1.00"},
		{"short", "opus-4-6", "$2.00"},
	} {
		for _, c := range r {
			tp.AddField(c, nil)
		}
		tp.EndRow()
	}
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "gpt-5.3-codex +1") || strings.Contains(got, "codex,") || strings.Contains(got, "cod…") {
		t.Errorf("models not cut by whole names:\n%s", got)
	}
	for l := range strings.SplitSeq(strings.TrimRight(got, "\n"), "\n") {
		if ansi.StringWidth(l) > 44 {
			t.Errorf("%d columns: %q", ansi.StringWidth(l), l)
		}
	}
}

// A column of running text loses whole words when it is cut, at the end
// or, where the end tells rows apart, in the middle: never part of a
// word ("why is…laky?").
func TestTableProseCutBetweenWords(t *testing.T) {
	for _, tc := range []struct {
		in     string
		w      int
		middle bool
		want   string
	}{
		{"why is the integration test flaky?", 16, false, "why is the…"},
		{"why is the integration test flaky?", 13, true, "why is…flaky?"},
		{"why is the integration test flaky?", 20, true, "why is the…flaky?"},
		{"short", 10, false, "short"},
		{"supercalifragilistic word", 10, false, "supercali…"},
		{"a supercalifragilistic", 10, true, "a sup…stic"},
	} {
		got := truncateWords(tc.in, tc.w)
		if tc.middle {
			got = truncateMiddleWords(tc.in, tc.w)
		}
		if got != tc.want || ansi.StringWidth(got) > tc.w {
			t.Errorf("cut %q to %d (middle %v) = %q, want %q", tc.in, tc.w, tc.middle, got, tc.want)
		}
	}

	ios, _, out, _ := Test()
	ios.SetStdoutTTY(true)
	ios.SetColorEnabled(false)
	ios.SetWidth(30)
	tp := NewTable(ios)
	tp.Header("ID", "LAST PROMPT")
	tp.Flex(1)
	tp.Prose(1)
	for _, r := range [][]string{
		{"01a1", "why is the integration test flaky?"},
		{"01a2", "why is the integration test slow?"},
	} {
		tp.AddField(r[0], nil)
		tp.AddField(r[1], nil)
		tp.EndRow()
	}
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		cell := strings.TrimSpace(l[6:])
		for _, w := range strings.Fields(strings.ReplaceAll(cell, "…", " ")) {
			if !slices.Contains(strings.Fields("why is the integration test flaky? slow?"), w) {
				t.Errorf("a prompt cut inside the word %q:\n%s", w, out)
			}
		}
	}
}

// A key column cut to fit keeps every agent's name whole and cuts the
// ID; the ends of the IDs still tell rows apart. At every width from
// the narrowest that shows the column to the natural one, no line is
// wider than the terminal.
func TestTableKeysKeepAgentNames(t *testing.T) {
	keys := []string{
		"claude-code:258f2e8c-2a6b-4c1e-9f0a-5d1a1c81a85d",
		"claude-code:258f2e8c-2a6b-4c1e-9f0a-5d1a1c881341",
		"copilot-vscode:9b2f0d4e-7c61-4d3a-8b5e-0f3e2a1c4d5e",
		"cli:main",
	}
	for width := 40; width <= 120; width++ {
		ios, _, out, _ := Test()
		ios.SetStdoutTTY(true)
		ios.SetColorEnabled(false)
		ios.SetWidth(width)
		tp := NewTable(ios)
		tp.Header("TITLE", "KEY", "LAST PROMPT")
		tp.Flex(1, 2, 0)
		tp.Prose(0, 2)
		tp.Keys(1)
		tp.Drop(2, 1)
		for _, k := range keys {
			tp.AddField("a title of some length for the row", nil)
			tp.AddField(k, nil)
			tp.AddField("what was asked last in it", nil)
			tp.EndRow()
		}
		if err := tp.Render(); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(tp.Hidden(), "KEY") {
			continue
		}
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		for i, k := range keys {
			agent, _, _ := strings.Cut(k, ":")
			if !strings.Contains(lines[i+1], agent+":") {
				t.Errorf("width %d: %s's name cut:\n%s", width, agent, out)
			}
		}
		if lines[1] == lines[2] {
			t.Errorf("width %d: two keys look the same:\n%s", width, out)
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > width {
				t.Errorf("width %d: a line of %d cells:\n%s", width, ansi.StringWidth(l), out)
			}
		}
	}
}
