package loom_test

import (
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/objectpath"
	"golang.org/x/tools/go/types/typeutil"
)

// No edge finds what a store can do by asking it what else it is: an
// engine's capabilities are its methods and the services it returns
// (loom.Engine), so that a store handed on through a wrapper keeps them
// and the compiler follows each to the edges that use it. This test reads the types, not
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
	for p, sites := range storeAssertions(pkgs) {
		if guardedPackage(p.PkgPath) {
			found = append(found, sites...)
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	for _, site := range found {
		t.Errorf("%s: a type assertion on a store; take the service from the engine (loom.Engine, loom.Optional), or have the code that opens the engine hand it in", site)
	}
}

// TestStoreAssertionGuardCatches plants each shape of assertion on a
// store that a reader could write — those a check by names let
// through, and a store carried as any through a variable, a parameter,
// a result, a field or a slice — in a package of the tree, with
// assertions that ask no store, and checks the guard finds every
// planted one and nothing else.
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
	"errors"
	"fmt"
	"io"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

type plantedBlame struct{ Store loom.Store }

type plantedPather interface{ Path() string }

type plantedHolder struct{ v any }

type plantedMore interface {
	loom.Store
	Path() string
}

type plantedKey struct{}

func plantedShapes(ctx context.Context, eng loom.Engine, st loom.Store, x loom.Store, b plantedBlame, more plantedMore, v any, err error, w io.Writer) {
	_, _ = eng.(interface{ Scrub(context.Context) error }) // PLANT: an interface written in place, on an engine
	_, _ = any(st).(interface{ Path() string })            // PLANT: through a conversion to any
	_, _ = x.(plantedPather)                               // PLANT: a local interface without a context, on an operand named x
	_, _ = st.(plantedElsewhere)                           // PLANT: an interface declared in another file
	_, _ = b.Store.(*sqlite.Store)                         // PLANT: a field holding a store, asserted to an engine's type
	switch x.(type) {                                      // PLANT: a type switch
	case *sqlite.Store: // PLANT: a case of an engine's type
	}
	_, _ = st.(*sqlite.Store)                                // PLANT: asserted to an engine's type
	_, _ = eng.Optional().Roots.(interface{ Close() error }) // PLANT: a service
	var q interface {
		Session(c context.Context, sessionID string) (*loom.Session, error)
	} = st
	_, _ = q.(loom.Engine)      // PLANT: an interface a store satisfies
	_, _ = more.(plantedPather) // PLANT: an interface with every method of a store and more
	held := any(eng)
	_, _ = held.(plantedPather) // PLANT: any(eng) kept in a variable
	var kept any = st
	switch kept.(type) { // PLANT: a store kept as any, switched on
	case fmt.Stringer:
	}
	_, _ = plantedAny(st).(plantedPather) // PLANT: returned as any
	h := plantedHolder{v: eng}
	_, _ = h.v.(plantedPather)                               // PLANT: a field of type any given a store
	_, _ = []any{st}[0].(plantedPather)                      // PLANT: an element of a []any
	_, _ = ctx.Value(plantedKey{}).(loom.Scrubber)           // PLANT: asserted to a service's type from anywhere
	_, _ = plantedHeldElsewhere.(interface{ Path() string }) // PLANT: a variable given a store in another file
	plantedTake(st)

	// What asks no store passes.
	_, _ = v.(string)
	_, _ = v.(error)
	_, _ = v.(fmt.Stringer)
	_, _ = err.(interface{ Unwrap() error })
	var pe interface{ Unwrap() error }
	_ = errors.As(err, &pe)
	_, _ = w.(io.Closer)
	n := any(3)
	_, _ = n.(int)
	_, _ = any(w).(fmt.Stringer)
	switch e := err.(type) {
	case interface{ Timeout() bool }:
		_ = e
	}
}

func plantedAny(st loom.Store) any { return st }

func plantedTake(v any) {
	_, _ = v.(plantedPather) // PLANT: a parameter of type any handed a store
}
`
	other := `package recall

import (
	"context"

	"github.com/loomhq/loom"
)

type plantedElsewhere interface{ Scrub(context.Context) error }

var plantedHeldElsewhere any

func plantedGive(st loom.Store) { plantedHeldElsewhere = st }
`
	overlay := map[string][]byte{
		filepath.Join(dir, "zz_planted.go"):  []byte(planted),
		filepath.Join(dir, "zz_planted2.go"): []byte(other),
	}
	pkgs := loadTyped(t, overlay, "./recall")
	var got []string
	for _, sites := range storeAssertions(pkgs) {
		for _, site := range sites {
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

// storeAssertions are the sites in each of pkgs of a type assertion or
// type switch on a store, or to a store's type, and of loom.StoreAs, as
// "file:line: operand", by package.
func storeAssertions(pkgs []*packages.Package) map[*packages.Package][]string {
	fl := followStores(pkgs)
	out := map[*packages.Package][]string{}
	for _, p := range pkgs {
		if sites := fl.sites(p); len(sites) > 0 {
			out[p] = sites
		}
	}
	return out
}

// sites are the sites in p the guard refuses.
func (fl *storeFlow) sites(p *packages.Package) []string {
	kinds := fl.kinds[p]
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
	target := func(n ast.Node, typ ast.Expr) {
		if tv, ok := p.TypesInfo.Types[typ]; ok && typ != nil && kinds.isStoreType(tv.Type) {
			site(n, "to "+types.TypeString(tv.Type, nil))
		}
	}
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeAssertExpr:
				if fl.holdsStore(p.TypesInfo, kinds, n.X) {
					x := unwrapConversion(p.TypesInfo, n.X)
					site(n, types.ExprString(x)+" ("+types.TypeString(p.TypesInfo.TypeOf(x), nil)+")")
				}
				target(n, n.Type)
			case *ast.TypeSwitchStmt:
				for _, c := range n.Body.List {
					for _, typ := range c.(*ast.CaseClause).List {
						target(typ, typ)
					}
				}
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

// storeFlow follows a store once it is held by a value whose type no
// longer says so: a variable, a parameter, a field, a function's result
// or an element of a slice or map whose type is an interface (any, or
// one a store satisfies among other types), given a store anywhere in
// the packages read, holds one wherever it is read. So any(st) kept in
// a variable, handed to a function taking any, returned as any or put
// in a []any is still a store where it is asserted.
type storeFlow struct {
	kinds map[*packages.Package]*storeMethods
	// named are the holders that outlive a package (package-level
	// functions and variables, their parameters and results, fields),
	// by package path and object path, so that a function of one
	// package returning a store as any holds one where another calls
	// it.
	named map[string]bool
	// local are the holders inside a function.
	local map[types.Object]bool
	enc   objectpath.Encoder
}

// followStores finds every holder of a store in pkgs, reading each
// package until a pass finds no new one.
func followStores(pkgs []*packages.Package) *storeFlow {
	fl := &storeFlow{kinds: map[*packages.Package]*storeMethods{}, named: map[string]bool{}, local: map[types.Object]bool{}}
	for _, p := range pkgs {
		if p.TypesInfo != nil {
			fl.kinds[p] = storeKinds(p.Types)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, p := range pkgs {
			if kinds := fl.kinds[p]; kinds != nil && fl.pass(p, kinds) {
				changed = true
			}
		}
	}
	return fl
}

// key names obj across packages, "" for an object inside a function.
func (fl *storeFlow) key(obj types.Object) string {
	if obj == nil || obj.Pkg() == nil {
		return ""
	}
	if fn, ok := obj.(*types.Func); ok {
		obj = fn.Origin()
	}
	path, err := fl.enc.For(obj)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(obj.Pkg().Path(), "_test") + " " + string(path)
}

func (fl *storeFlow) holds(obj types.Object) bool {
	if obj == nil {
		return false
	}
	if k := fl.key(obj); k != "" {
		return fl.named[k]
	}
	return fl.local[obj]
}

// mark records that obj holds a store, reporting whether that is new.
func (fl *storeFlow) mark(obj types.Object) bool {
	if obj == nil || fl.holds(obj) {
		return false
	}
	if k := fl.key(obj); k != "" {
		fl.named[k] = true
	} else {
		fl.local[obj] = true
	}
	return true
}

// holdsStore reports whether x is a store: of a store's type, or read
// from a holder of one, through conversions to an interface.
func (fl *storeFlow) holdsStore(info *types.Info, kinds *storeMethods, x ast.Expr) bool {
	x = unwrapConversion(info, x)
	if t := info.TypeOf(x); t != nil && kinds.isStore(t) {
		return true
	}
	switch e := x.(type) {
	case *ast.Ident:
		return fl.holds(info.ObjectOf(e))
	case *ast.SelectorExpr:
		return fl.holds(info.ObjectOf(e.Sel))
	case *ast.IndexExpr:
		return fl.holdsStore(info, kinds, e.X)
	case *ast.StarExpr:
		return fl.holdsStore(info, kinds, e.X)
	case *ast.UnaryExpr:
		return e.Op == token.AND && fl.holdsStore(info, kinds, e.X)
	case *ast.CompositeLit:
		if _, isStruct := info.TypeOf(e).Underlying().(*types.Struct); isStruct {
			return false
		}
		for _, elt := range e.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				elt = kv.Value
			}
			if fl.holdsStore(info, kinds, elt) {
				return true
			}
		}
	case *ast.CallExpr:
		if id, ok := ast.Unparen(e.Fun).(*ast.Ident); ok {
			if b, ok := info.Uses[id].(*types.Builtin); ok && b.Name() == "append" {
				return slices.ContainsFunc(e.Args, func(a ast.Expr) bool { return fl.holdsStore(info, kinds, a) })
			}
		}
		fn := typeutil.StaticCallee(info, e)
		if fn == nil {
			return false
		}
		fn = fn.Origin()
		if fl.holds(fn) {
			return true
		}
		res := fn.Signature().Results()
		for i := range res.Len() {
			if fl.holds(res.At(i)) {
				return true
			}
		}
	}
	return false
}

// holder is the variable or field an assignment to x writes, nil for
// none: a slice, map or pointer written through holds what is written.
func holder(info *types.Info, x ast.Expr) types.Object {
	switch e := ast.Unparen(x).(type) {
	case *ast.Ident:
		if e.Name == "_" {
			return nil
		}
		return info.ObjectOf(e)
	case *ast.SelectorExpr:
		return info.ObjectOf(e.Sel)
	case *ast.IndexExpr:
		return holder(info, e.X)
	case *ast.StarExpr:
		return holder(info, e.X)
	}
	return nil
}

// pass reads p once for stores given to holders, reporting whether it
// found a new holder.
func (fl *storeFlow) pass(p *packages.Package, kinds *storeMethods) bool {
	info := p.TypesInfo
	changed := false
	give := func(to types.Object, from ast.Expr) {
		if to != nil && from != nil && fl.holdsStore(info, kinds, from) && fl.mark(to) {
			changed = true
		}
	}
	assign := func(lhs []ast.Expr, rhs []ast.Expr) {
		if len(lhs) == len(rhs) {
			for i := range lhs {
				give(holder(info, lhs[i]), rhs[i])
			}
			return
		}
		if len(rhs) == 1 {
			// v, ok := m[k]; a, err := f(): each holder of an interface
			// type but error may be given the store.
			for _, l := range lhs {
				if t := info.TypeOf(l); t != nil && types.IsInterface(t) && !types.Identical(t, types.Universe.Lookup("error").Type()) {
					give(holder(info, l), rhs[0])
				}
			}
		}
	}
	var funcs []*types.Func // the functions whose body is being read, innermost last
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			fn, _ := info.Defs[n.Name].(*types.Func)
			if n.Body != nil {
				funcs = append(funcs, fn)
				ast.Inspect(n.Body, visit)
				funcs = funcs[:len(funcs)-1]
			}
			return false
		case *ast.FuncLit:
			funcs = append(funcs, nil)
			ast.Inspect(n.Body, visit)
			funcs = funcs[:len(funcs)-1]
			return false
		case *ast.ReturnStmt:
			if len(funcs) > 0 && funcs[len(funcs)-1] != nil {
				fn := funcs[len(funcs)-1]
				for _, r := range n.Results {
					give(fn, r)
				}
			}
		case *ast.AssignStmt:
			assign(n.Lhs, n.Rhs)
		case *ast.ValueSpec:
			lhs := make([]ast.Expr, len(n.Names))
			for i, id := range n.Names {
				lhs[i] = id
			}
			if len(n.Values) > 0 {
				assign(lhs, n.Values)
			}
		case *ast.RangeStmt:
			if n.Value != nil {
				give(holder(info, n.Value), n.X)
			}
		case *ast.CompositeLit:
			st, ok := info.TypeOf(n).Underlying().(*types.Struct)
			if !ok {
				break
			}
			for i, elt := range n.Elts {
				if kv, ok := elt.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok {
						give(info.ObjectOf(id), kv.Value)
					}
				} else if i < st.NumFields() {
					give(st.Field(i), elt)
				}
			}
		case *ast.CallExpr:
			fn := typeutil.StaticCallee(info, n)
			if fn == nil {
				break
			}
			params := fn.Origin().Signature().Params()
			for i, arg := range n.Args {
				if params.Len() == 0 {
					break
				}
				give(params.At(min(i, params.Len()-1)), arg)
			}
		}
		return true
	}
	for _, f := range p.Syntax {
		ast.Inspect(f, visit)
	}
	return changed
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
// those of each service's interface (the interfaces loom.Engine embeds,
// and loom.Optional's fields).
type storeMethods struct {
	all   map[string]string // every method of a store or a service
	store map[string]string // loom.Store's alone
	// types are loom.Store, loom.Engine, loom.Reader where there is
	// one, and each service's interface.
	types []types.Type
	// storeIface is loom.Store's interface.
	storeIface *types.Interface
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
		sm.types = append(sm.types, t)
		for i := range it.NumMethods() {
			m := it.Method(i)
			into[m.Name()] = sigString(m.Type())
		}
	}
	add(sm.store, lookup("Store"))
	add(sm.all, lookup("Engine"))
	add(sm.all, lookup("Reader"))
	// The required services are the interfaces loom.Engine embeds; the
	// optional ones are the fields of loom.Optional.
	if eng, ok := lookup("Engine").(*types.Named); ok {
		if it, ok := eng.Underlying().(*types.Interface); ok {
			for i := range it.NumEmbeddeds() {
				add(sm.all, it.EmbeddedType(i))
			}
		}
	}
	if st, ok := lookupStruct(lookup("Optional")); ok {
		for i := range st.NumFields() {
			add(sm.all, st.Field(i).Type())
		}
	}
	if len(sm.store) < 10 {
		return nil
	}
	sm.storeIface = lookup("Store").Underlying().(*types.Interface)
	return sm
}

// isStoreType reports whether asserting to t asks whether a value is a
// store: t is one of loom's store, engine, reader or service
// interfaces, an interface with every method of loom.Store, or a
// concrete type with every method of loom.Store (an engine's own type).
func (sm *storeMethods) isStoreType(t types.Type) bool {
	if types.IsInterface(t) {
		if slices.ContainsFunc(sm.types, func(s types.Type) bool { return types.Identical(s, t) }) {
			return true
		}
		return types.Implements(t, sm.storeIface)
	}
	return sm.isStore(t)
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

// sigString writes a method's signature by its types alone, packages
// by path: the names of its parameters are not part of what a store
// is, so an interface that renames them is still a store's.
func sigString(t types.Type) string {
	sig, ok := t.(*types.Signature)
	if !ok {
		return types.TypeString(t, qualifyByPath)
	}
	tuple := func(tu *types.Tuple, variadic bool) string {
		parts := make([]string, tu.Len())
		for i := range tu.Len() {
			ty := tu.At(i).Type()
			if variadic && i == tu.Len()-1 {
				parts[i] = "..." + types.TypeString(ty.(*types.Slice).Elem(), qualifyByPath)
				continue
			}
			parts[i] = types.TypeString(ty, qualifyByPath)
		}
		return strings.Join(parts, ", ")
	}
	return "func(" + tuple(sig.Params(), sig.Variadic()) + ") (" + tuple(sig.Results(), false) + ")"
}

func qualifyByPath(p *types.Package) string { return p.Path() }

// isStore reports whether a value of type t is a store: an interface
// with methods, each of which a store or one of its services has, an
// interface with every method of loom.Store and more, or a concrete
// type with every method of loom.Store.
func (sm *storeMethods) isStore(t types.Type) bool {
	if it, ok := t.Underlying().(*types.Interface); ok {
		if it.NumMethods() == 0 {
			return false
		}
		if sm.storeIface != nil && types.Implements(t, sm.storeIface) {
			// loom.Store with more methods: a store of some kind.
			return true
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
