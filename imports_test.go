package loom_test

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// The root package is the domain only (docs/architecture.md): it
// imports no other package of loom, nothing that reaches files, the
// network, a database or the log (os, net, database/sql, log, log/slog,
// os/exec, …), and outside the standard library only the UUID
// generator. A change that breaks the rule fails here, not in review.
func TestRootImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"os", "net", "database", "log", "syscall", "plugin", "unsafe", "runtime/cgo"}
	outside := []string{"github.com/google/uuid"}
	for _, imp := range pkg.Imports {
		root, _, _ := strings.Cut(imp, "/")
		switch {
		case strings.HasPrefix(imp, "github.com/loomhq/loom"):
			t.Errorf("the root package imports %s, a package of loom", imp)
		case strings.Contains(root, "."):
			if !slices.Contains(outside, imp) {
				t.Errorf("the root package imports %s, outside the standard library", imp)
			}
		case slices.Contains(forbidden, root) || slices.Contains(forbidden, imp):
			t.Errorf("the root package imports %s, which reaches outside the process", imp)
		case strings.HasPrefix(imp, "encoding/") && imp != "encoding/json" && imp != "encoding/base64" && imp != "encoding/hex" && imp != "encoding/binary":
			t.Errorf("the root package imports %s: its one serialisation is encoding/json", imp)
		}
	}
}
