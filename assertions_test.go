package loom_test

import (
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// No edge finds what a store can do by asking it what else it is: an
// engine's capabilities are the services it returns (loom.Engine), so
// that a store handed on through a wrapper keeps them and the compiler
// follows each to the edges that use it. This test reads the types, not
// the names: outside the root package and the engines, it refuses every
// type assertion and type switch whose operand is a store — a value
// whose type is loom.Store, loom.Engine, a service's interface or any
// interface made only of their methods, or a concrete type with every
// method of loom.Store — whatever the operand is called, whatever it is
// asserted to, and through a conversion to an interface (any(st)). It
// also refuses any mention of loom.StoreAs.
func TestNoAssertionOnStores(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks every package")
	}
	pkgs := loadTyped(t, nil, "./...")
	var found []string
	for _, p := range pkgs {
		if guardedPackage(p.PkgPath) {
			found = append(found, storeAssertions(p)...)
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	for _, site := range found {
		file, _, _ := strings.Cut(site, ":")
		if _, ok := exemptAssertions[file]; ok {
			continue
		}
		t.Errorf("%s: a type assertion on a store; take the service from the engine (loom.Services), or have the code that opens the engine hand it in", site)
	}
}

// TestStoreAssertionGuardCatches plants each shape of assertion on a
// store that a reader could write — and that a check by names let
// through — in a package of the tree, and checks the guard finds every
// one and nothing else.
func TestStoreAssertionGuardCatches(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks a package")
	}
	dir, err := filepath.Abs("recall")
	if err != nil {
		t.Fatal(err)
	}
	planted := `package recall

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

type plantedBlame struct{ Store loom.Store }

type plantedPather interface{ Path() string }

func plantedShapes(ctx context.Context, eng loom.Engine, st loom.Store, x loom.Store, b plantedBlame, v any) {
	_, _ = eng.(interface{ Scrub(context.Context) error }) // PLANT: an interface written in place, on an engine
	_, _ = any(st).(interface{ Path() string })            // PLANT: through a conversion to any
	_, _ = x.(plantedPather)                               // PLANT: a local interface without a context, on an operand named x
	_, _ = st.(plantedElsewhere)                           // PLANT: an interface declared in another file
	_, _ = b.Store.(*sqlite.Store)                         // PLANT: a field holding a store, asserted to an engine's type
	switch x.(type) {                                      // PLANT: a type switch
	case *sqlite.Store:
	}
	_, _ = eng.Services().Edits.(interface{ Close() error }) // PLANT: a service
	var q interface {
		Session(ctx context.Context, id string) (*loom.Session, error)
	} = st
	_, _ = q.(loom.Engine) // PLANT: an interface a store satisfies
	_, _ = v.(string)
	_, _ = v.(error)
}
`
	other := `package recall

import "context"

type plantedElsewhere interface{ Scrub(context.Context) error }
`
	overlay := map[string][]byte{
		filepath.Join(dir, "zz_planted.go"):  []byte(planted),
		filepath.Join(dir, "zz_planted2.go"): []byte(other),
	}
	pkgs := loadTyped(t, overlay, "./recall")
	var got []string
	for _, p := range pkgs {
		for _, site := range storeAssertions(p) {
			if strings.Contains(site, "zz_planted") {
				got = append(got, site)
			}
		}
	}
	var want []string
	for i, line := range strings.Split(planted, "\n") {
		if strings.Contains(line, "// PLANT:") {
			want = append(want, "recall/zz_planted.go:"+strconv.Itoa(i+1))
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w+":") }) {
			t.Errorf("the guard missed the assertion planted at %s", w)
		}
	}
	for _, g := range got {
		if !slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(g, w+":") }) {
			t.Errorf("the guard flagged %s, which asks no store", g)
		}
	}
}

// loadTyped type-checks the packages of patterns, their tests included.
func loadTyped(t *testing.T, overlay map[string][]byte, patterns ...string) []*packages.Package {
	t.Helper()
	cfg := &packages.Config{
		Mode:    packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports,
		Tests:   true,
		Overlay: overlay,
		Env:     append(os.Environ(), "CGO_ENABLED=0"),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		t.Fatalf("type-checking: %s", strings.Join(errs[:min(len(errs), 5)], "; "))
	}
	return pkgs
}

const loomPath = "github.com/loomhq/loom"

// exemptAssertions are the files whose assertions on a store stand, each
// with why. The secret gate recognises a gate handed to it, so that a
// store behind one is never gated (and its echoes counted) twice; it
// goes when the gate is a reader of its own type rather than a store.
var exemptAssertions = map[string]string{
	"secrets/gate.go": "the gate recognises a gate (Gate, GateEngine)",
}

// guardedPackage reports whether the guard reads the package of path:
// every package of loom but the root (the domain, which defines the
// store) and the engines with the rules they share (sessionstore,
// whose optional steps of an engine are its own to find).
func guardedPackage(path string) bool {
	path = strings.TrimSuffix(path, "_test")
	rel, ok := strings.CutPrefix(path, loomPath+"/")
	if !ok {
		return false
	}
	switch rel {
	case "sqlite", "postgres", "internal/memstore", "sessionstore":
		return false
	}
	return true
}

// storeAssertions are the sites in p of a type assertion or type
// switch on a store, and of loom.StoreAs, as "file:line: operand".
func storeAssertions(p *packages.Package) []string {
	if p.TypesInfo == nil {
		return nil
	}
	kinds := storeKinds(p.Types)
	if kinds == nil {
		return nil
	}
	var out []string
	site := func(n ast.Node, what string) {
		pos := p.Fset.Position(n.Pos())
		file := pos.Filename
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, file); err == nil {
				file = rel
			}
		}
		out = append(out, filepath.ToSlash(file)+":"+strconv.Itoa(pos.Line)+": "+what)
	}
	check := func(n ast.Node, x ast.Expr) {
		x = unwrapConversion(p.TypesInfo, x)
		tv, ok := p.TypesInfo.Types[x]
		if ok && kinds.isStore(tv.Type) {
			site(n, types.ExprString(x)+" ("+types.TypeString(tv.Type, nil)+")")
		}
	}
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeAssertExpr:
				check(n, n.X)
			case *ast.SelectorExpr:
				if obj, ok := p.TypesInfo.Uses[n.Sel]; ok && obj.Pkg() != nil && obj.Pkg().Path() == loomPath && obj.Name() == "StoreAs" {
					site(n, "loom.StoreAs")
				}
			}
			return true
		})
	}
	return out
}

// unwrapConversion is x without parentheses and conversions to an
// interface type: what any(st) converts is st.
func unwrapConversion(info *types.Info, x ast.Expr) ast.Expr {
	for {
		switch e := x.(type) {
		case *ast.ParenExpr:
			x = e.X
			continue
		case *ast.CallExpr:
			if len(e.Args) == 1 {
				if tv, ok := info.Types[e.Fun]; ok && tv.IsType() && types.IsInterface(tv.Type) {
					x = e.Args[0]
					continue
				}
			}
		}
		return x
	}
}

// storeMethods are the methods of a store, by name, with their
// signatures written by package path: loom.Store's, loom.Engine's, and
// those of each service's interface (loom.Services' fields).
type storeMethods struct {
	all   map[string]string // every method of a store or a service
	store map[string]string // loom.Store's alone
}

// storeKinds finds loom's store types among what pkg imports, nil when
// pkg does not reach the root package.
func storeKinds(pkg *types.Package) *storeMethods {
	root := findImport(pkg, loomPath, map[*types.Package]bool{})
	if root == nil {
		if pkg.Path() != loomPath {
			return nil
		}
		root = pkg
	}
	lookup := func(name string) types.Type {
		obj := root.Scope().Lookup(name)
		if obj == nil {
			return nil
		}
		return obj.Type()
	}
	sm := &storeMethods{all: map[string]string{}, store: map[string]string{}}
	add := func(into map[string]string, t types.Type) {
		if t == nil {
			return
		}
		it, ok := t.Underlying().(*types.Interface)
		if !ok {
			return
		}
		for i := range it.NumMethods() {
			m := it.Method(i)
			into[m.Name()] = sigString(m.Type())
		}
	}
	add(sm.store, lookup("Store"))
	add(sm.all, lookup("Engine"))
	if st, ok := lookupStruct(lookup("Services")); ok {
		for i := range st.NumFields() {
			add(sm.all, st.Field(i).Type())
		}
	}
	if len(sm.store) < 10 {
		return nil
	}
	return sm
}

func lookupStruct(t types.Type) (*types.Struct, bool) {
	if t == nil {
		return nil, false
	}
	st, ok := t.Underlying().(*types.Struct)
	return st, ok
}

// findImport is the package of path among those pkg imports, directly
// or not.
func findImport(pkg *types.Package, path string, seen map[*types.Package]bool) *types.Package {
	if seen[pkg] {
		return nil
	}
	seen[pkg] = true
	for _, imp := range pkg.Imports() {
		if imp.Path() == path {
			return imp
		}
		if found := findImport(imp, path, seen); found != nil {
			return found
		}
	}
	return nil
}

func sigString(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return p.Path() })
}

// isStore reports whether a value of type t is a store: an interface
// with methods, each of which a store or one of its services has, or a
// concrete type with every method of loom.Store.
func (sm *storeMethods) isStore(t types.Type) bool {
	if it, ok := t.Underlying().(*types.Interface); ok {
		if it.NumMethods() == 0 {
			return false
		}
		for i := range it.NumMethods() {
			m := it.Method(i)
			if sig, ok := sm.all[m.Name()]; !ok || sig != sigString(m.Type()) {
				if sig, ok := sm.store[m.Name()]; !ok || sig != sigString(m.Type()) {
					return false
				}
			}
		}
		return true
	}
	ms := types.NewMethodSet(t)
	if _, isPtr := t.(*types.Pointer); !isPtr {
		ms = types.NewMethodSet(types.NewPointer(t))
	}
	for name, sig := range sm.store {
		sel := ms.Lookup(nil, name)
		if sel == nil {
			// Unexported names are never in Store; an exported one
			// looks up with any package.
			return false
		}
		if sigString(sel.Type()) != sig {
			return false
		}
	}
	return true
}
