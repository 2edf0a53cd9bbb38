package syncpath_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom/syncpath"
)

// Twelve records set aside, two of them with an author listed last:
// the authors' come first, ten lines in all, then one for the rest and
// one of how many; a reason past MaxWhy is cut.
func TestLines(t *testing.T) {
	var aside []syncpath.SetAside
	for i := range 10 {
		aside = append(aside, syncpath.Aside(fmt.Sprintf("junk%d", i), 1, "", fmt.Errorf("altered")))
	}
	aside = append(aside, syncpath.SetAside{Host: "w", Index: 2, Author: "bob", Why: "another session already has key"},
		syncpath.Aside("w", 3, "bob", fmt.Errorf("%s", strings.Repeat("x", 400))))
	lines := syncpath.Lines(aside, "nobody")
	if len(lines) != 12 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	if lines[0] != "writer w, record 2 (bob): set aside: another session already has key" || !strings.HasSuffix(lines[1], "x…") {
		t.Errorf("first lines %q", lines[:2])
	}
	if lines[2] != "writer junk0, record 1 (nobody): set aside: altered" {
		t.Errorf("a line without author: %q", lines[2])
	}
	if lines[10] != "and 2 more records of 2 writers set aside" || lines[11] != "12 records set aside, not applied (the rest was)" {
		t.Errorf("last lines %q", lines[10:])
	}
	if len(aside[11].Why) > syncpath.MaxWhy+len("…") {
		t.Errorf("a reason of %d bytes", len(aside[11].Why))
	}
	if syncpath.Lines(nil, "nobody") != nil {
		t.Error("lines of nothing set aside")
	}
}
