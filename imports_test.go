package loom_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
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

// No edge finds what a store can do by asking it what else it is: an
// engine's capabilities are the services it returns (loom.Engine), so
// that a store handed on through a wrapper keeps them and the compiler
// follows each to the edges that use it. Outside the root package,
// this test refuses a type assertion (or type switch) to a store type
// of loom (Store, Engine, or the type of a field of loom.Services), to
// another package's store type (a name ending in Store), or to a
// package's own interface of methods taking a context (how a local
// capability of a store was found) or an interface written in place,
// and any mention of loom.StoreAs.
func TestNoAssertionOnStores(t *testing.T) {
	fset := token.NewFileSet()
	root, err := parser.ParseFile(fset, "services.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	storeTypes := map[string]bool{"Store": true, "Engine": true}
	ast.Inspect(root, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Services" {
			return true
		}
		for _, f := range ts.Type.(*ast.StructType).Fields.List {
			if id, ok := f.Type.(*ast.Ident); ok {
				storeTypes[id.Name] = true
			}
		}
		return false
	})
	if len(storeTypes) < 10 {
		t.Fatalf("found only %d store types in services.go", len(storeTypes))
	}

	var found []string
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || filepath.Dir(path) == "." || enginePackage(filepath.ToSlash(filepath.Dir(path))) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		loomName := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"github.com/loomhq/loom"` {
				loomName = "loom"
				if imp.Name != nil {
					loomName = imp.Name.Name
				}
			}
		}
		own := strings.TrimSuffix(f.Name.Name, "_test")
		local := ctxInterfaces(f)
		asserted := func(x, typ ast.Expr) {
			if typ == nil {
				return
			}
			name := exprString(typ)
			if _, lit := typ.(*ast.InterfaceType); lit {
				// An interface written in place (st.(interface{
				// Path() string })) asks a store what else it is
				// as surely as a named one.
				if storeOperand(x) {
					found = append(found, filepath.ToSlash(path)+": "+exprString(x)+".(interface{…})")
				}
				return
			}
			base := strings.TrimPrefix(name, "*")
			pkg, typeName, qualified := strings.Cut(base, ".")
			switch {
			case qualified && pkg == own:
				// A package's tests may know its own types.
				return
			case qualified && pkg == loomName && storeTypes[typeName]:
			case qualified && strings.HasSuffix(typeName, "Store"):
			case !qualified && local[base] && storeOperand(x):
			case !qualified && strings.HasSuffix(base, "Store") && strings.HasPrefix(name, "*"):
			default:
				return
			}
			found = append(found, filepath.ToSlash(path)+": "+name)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeAssertExpr:
				asserted(n.X, n.Type)
			case *ast.TypeSwitchStmt:
				var x ast.Expr
				switch a := n.Assign.(type) {
				case *ast.AssignStmt:
					x = a.Rhs[0].(*ast.TypeAssertExpr).X
				case *ast.ExprStmt:
					x = a.X.(*ast.TypeAssertExpr).X
				}
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						asserted(x, e)
					}
				}
				return true
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && loomName != "" && id.Name == loomName && n.Sel.Name == "StoreAs" {
					found = append(found, filepath.ToSlash(path)+": loom.StoreAs")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	found = slices.Compact(found)
	for _, site := range found {
		t.Errorf("%s: a type assertion on a store; take the service from the engine (loom.Services), or have the code that opens the engine hand it in", site)
	}
}

// enginePackage reports whether dir is a package that defines a store:
// an engine, or the rules they share (sessionstore, whose optional
// steps of an engine are its own to find).
func enginePackage(dir string) bool {
	return dir == "sqlite" || dir == "postgres" || dir == "internal/memstore" || dir == "sessionstore"
}

// storeOperand reports whether x, the value a type assertion asks, is
// named as a store is: st, store, a Store or st field, or a replica
// (r). A local interface asserted on anything else (a session format,
// f) is no store's capability.
func storeOperand(x ast.Expr) bool {
	s := exprString(x)
	return s == "st" || s == "store" || s == "r" || strings.HasSuffix(s, ".Store") || strings.HasSuffix(s, ".st")
}

// ctxInterfaces are the interface types f's package declares in f
// whose methods take a context: what a local capability of a store
// looks like. The file's own are enough: such an interface is declared
// beside the code that asserts it.
func ctxInterfaces(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			it, ok := ts.Type.(*ast.InterfaceType)
			if !ok {
				continue
			}
			for _, m := range it.Methods.List {
				ft, ok := m.Type.(*ast.FuncType)
				if ok && len(ft.Params.List) > 0 && exprString(ft.Params.List[0].Type) == "context.Context" {
					out[ts.Name.Name] = true
					break
				}
			}
		}
	}
	return out
}

// exprString is a type expression as written: "loom.Store", "*EmptyStore".
func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return ""
}
