package loom_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// requiredServices are the services every engine must provide, which
// loom.Engine embeds. Written here rather than read from loom.Engine,
// so that one dropped from it fails TestEngineRequiresServices.
var requiredServices = []string{
	"CallCounter", "SourceLocker", "ImportApplier", "ProjectMover",
	"OriginalsKeeper", "SyncStore", "EditStore", "EditVersioner",
}

// An engine that lacks any required service does not compile: for each
// one, a type with every method of an engine but that service's is not
// a loom.Engine, and the type checker names a method it misses. The
// same type with every service is one, so the errors come from what is
// left out alone.
func TestEngineRequiresServices(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the root package")
	}
	loom := loadRoot(t)
	check := func(leave string) error {
		var embeds strings.Builder
		for _, s := range requiredServices {
			if s != leave {
				embeds.WriteString("\tloom." + s + "\n")
			}
		}
		src := "package planted\n\nimport \"github.com/loomhq/loom\"\n\n" +
			"type partial interface {\n\tloom.Store\n" + embeds.String() + "\tOptional() loom.Optional\n}\n\n" +
			"type engine struct{ partial }\n\nvar _ loom.Engine = engine{}\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "planted.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		var first error
		conf := types.Config{
			Importer: importerFunc(func(path string) (*types.Package, error) { return loom, nil }),
			Error: func(err error) {
				if first == nil {
					first = err
				}
			},
		}
		conf.Check("planted", fset, []*ast.File{f}, nil)
		return first
	}
	if err := check(""); err != nil {
		t.Fatalf("a type with every service is no loom.Engine: %v", err)
	}
	for _, s := range requiredServices {
		obj := loom.Scope().Lookup(s)
		if obj == nil {
			t.Errorf("loom has no %s", s)
			continue
		}
		it, ok := obj.Type().Underlying().(*types.Interface)
		if !ok || it.NumMethods() == 0 {
			t.Errorf("loom.%s is no interface with methods", s)
			continue
		}
		err := check(s)
		if err == nil {
			t.Errorf("a type without loom.%s's methods is a loom.Engine: the service is not required", s)
			continue
		}
		named := false
		for i := range it.NumMethods() {
			named = named || strings.Contains(err.Error(), "missing method "+it.Method(i).Name())
		}
		if !named {
			t.Errorf("without loom.%s the type checker says %q, which names none of its methods", s, err)
		}
	}
}

// importerFunc imports by a function.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// loadRoot type-checks the root package, without its tests.
func loadRoot(t *testing.T) *types.Package {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports | packages.NeedDeps}, loomPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 || pkgs[0].Types == nil {
		t.Fatalf("type-checking %s: %v", loomPath, pkgs)
	}
	return pkgs[0].Types
}
