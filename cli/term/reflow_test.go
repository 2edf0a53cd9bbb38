package term

import (
	"strings"
	"testing"
)

func TestReflowProse(t *testing.T) {
	// A paragraph edited after it was wrapped by hand: its first line
	// is too long, its fourth too short.
	in := "By default the prompt starts a new session; -c continues this project's\n" +
		"most recent session, --resume REF a given one, --key KEY the session with\n" +
		"that key. A PROMPT of - reads the prompt from\n" +
		"stdin.\n" +
		"\n" +
		"Examples stay as they are:\n" +
		"  loom run \"summarise the README\"\n" +
		"  loom run -c \"and now the tests\"\n" +
		"\n" +
		"- a list item stays\n" +
		"- and so does its neighbour\n" +
		"\n" +
		"1. numbered\n" +
		"2. too\n" +
		"\n" +
		"Every API call needs a token:\n" +
		"Authorization: Bearer TOKEN."
	out := ReflowProse(in, 80)
	paras := strings.Split(out, "\n\n")
	if len(paras) != 5 {
		t.Fatalf("%d paragraphs, want 5:\n%s", len(paras), out)
	}
	lines := strings.Split(paras[0], "\n")
	for i, l := range lines {
		if len(l) > 80 {
			t.Errorf("line %d is %d columns: %q", i, len(l), l)
		}
		if i < len(lines)-1 && len(l) < 60 {
			t.Errorf("line %d of the prose is short (%d columns), a wrap left it: %q", i, len(l), l)
		}
	}
	if !strings.Contains(paras[0], "--resume REF") || strings.Contains(paras[0], "\nstdin.") {
		t.Errorf("prose not joined:\n%s", paras[0])
	}
	for _, kept := range paras[1:] {
		if !strings.Contains(in, kept) {
			t.Errorf("a paragraph that is not prose changed:\n%s", kept)
		}
	}
	if got := ReflowProse(in, 0); got != in {
		t.Errorf("width 0 changed the text")
	}
}
