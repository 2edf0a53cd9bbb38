package fake_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/internal/testkit/fake"
)

// fakes are the service interfaces of package loom, each with its fake.
var fakes = []struct {
	service reflect.Type
	fake    any
}{
	{reflect.TypeFor[loom.CallCounter](), fake.CallCounter{}},
	{reflect.TypeFor[loom.SourceLocker](), fake.SourceLocker{}},
	{reflect.TypeFor[loom.ImportApplier](), fake.ImportApplier{}},
	{reflect.TypeFor[loom.ProjectMover](), fake.ProjectMover{}},
	{reflect.TypeFor[loom.OriginalsKeeper](), fake.OriginalsKeeper{}},
	{reflect.TypeFor[loom.TokenStore](), fake.TokenStore{}},
	{reflect.TypeFor[loom.ShareStore](), fake.ShareStore{}},
	{reflect.TypeFor[loom.SyncStore](), fake.SyncStore{}},
	{reflect.TypeFor[loom.HubLocks](), fake.HubLocks{}},
	{reflect.TypeFor[loom.TeamHub](), fake.TeamHub{}},
	{reflect.TypeFor[loom.TeamCheckpoints](), fake.TeamCheckpoints{}},
	{reflect.TypeFor[loom.VectorReader](), fake.VectorReader{}},
	{reflect.TypeFor[loom.VectorStore](), fake.VectorStore{}},
	{reflect.TypeFor[loom.EditStore](), fake.EditStore{}},
	{reflect.TypeFor[loom.EditVersioner](), fake.EditVersioner{}},
	{reflect.TypeFor[loom.RootLister](), fake.RootLister{}},
	{reflect.TypeFor[loom.ActivityReader](), fake.ActivityReader{}},
	{reflect.TypeFor[loom.IndexSizer](), fake.IndexSizer{}},
	{reflect.TypeFor[loom.IndexMerger](), fake.IndexMerger{}},
	{reflect.TypeFor[loom.Scrubber](), fake.Scrubber{}},
	{reflect.TypeFor[loom.ScrubMarker](), fake.ScrubMarker{}},
	{reflect.TypeFor[loom.LocalLog](), fake.LocalLog{}},
	{reflect.TypeFor[loom.Reader](), fake.Reader{}},
}

// notServices are the interfaces of package loom that have no fake
// here, with why.
var notServices = map[string]string{
	"Store":    "a whole store: a test that needs one opens one (storetest, cmdtest.Store)",
	"Engine":   "a store with its services: as Store",
	"Provider": "a model: openaitest and anthropictest serve one",
	"Lease":    "a lock's handle, which a SourceLocker's fake returns as its test needs",
}

// Every method of a service has a function field of the same name with
// "Fn" added, of the method's type, and the fake has no other field: a
// method added to a service without its field fails here.
func TestEveryMethodHasItsField(t *testing.T) {
	for _, c := range fakes {
		ft := reflect.TypeOf(c.fake)
		if !reflect.PointerTo(ft).Implements(c.service) {
			t.Errorf("*fake.%s does not implement loom.%s", ft.Name(), c.service.Name())
		}
		if ft.Name() != c.service.Name() {
			t.Errorf("the fake of loom.%s is named %s", c.service.Name(), ft.Name())
		}
		want := map[string]bool{}
		for m := range c.service.Methods() {
			want[m.Name+"Fn"] = true
			f, ok := ft.FieldByName(m.Name + "Fn")
			if !ok {
				t.Errorf("fake.%s has no field %sFn for loom.%s.%s", ft.Name(), m.Name, c.service.Name(), m.Name)
				continue
			}
			if f.Type != m.Type {
				t.Errorf("fake.%s.%sFn is a %s, want %s", ft.Name(), m.Name, f.Type, m.Type)
			}
		}
		for _, f := range reflect.VisibleFields(ft) {
			if !f.Anonymous && !want[f.Name] {
				t.Errorf("fake.%s.%s is the field of no method of loom.%s", ft.Name(), f.Name, c.service.Name())
			}
		}
	}
}

// Every interface package loom declares has its fake above or says in
// notServices why it has none: a new service without a fake fails here.
func TestEveryServiceHasAFake(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	faked := map[string]bool{}
	for _, c := range fakes {
		faked[c.service.Name()] = true
	}
	seen := 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if _, ok := ts.Type.(*ast.InterfaceType); ok && ts.Name.IsExported() {
				seen++
				if !faked[ts.Name.Name] && notServices[ts.Name.Name] == "" {
					t.Errorf("loom.%s has no fake: add one to package fake and to its table, or say in notServices why it needs none", ts.Name.Name)
				}
			}
			return false
		})
	}
	if seen < len(fakes) {
		t.Fatalf("found %d interfaces in package loom, fewer than the %d faked: the parse did not find the package", seen, len(fakes))
	}
}

// A method whose field is not set returns an error that names it, or
// panics naming it where it returns no error: never zero values as if
// the fake had nothing to say.
func TestUnsetFieldNamesTheMethod(t *testing.T) {
	for _, c := range fakes {
		v := reflect.New(reflect.TypeOf(c.fake))
		for m := range c.service.Methods() {
			name := fmt.Sprintf("%s.%s", reflect.TypeOf(c.fake).Name(), m.Name)
			t.Run(name, func(t *testing.T) {
				in := []reflect.Value{reflect.ValueOf(context.Background())}
				for i := 1; i < m.Type.NumIn(); i++ {
					in = append(in, reflect.Zero(m.Type.In(i)))
				}
				if m.Type.NumIn() == 0 {
					in = nil
				}
				err := callFor(v.MethodByName(m.Name), in)
				if err == nil || !strings.Contains(err.Error(), "."+m.Name+" called") || !strings.Contains(err.Error(), m.Name+"Fn") {
					t.Errorf("%s without its field: %v, want an error naming %s and %sFn", name, err, m.Name, m.Name)
				}
			})
		}
	}
}

// callFor calls fn with in and returns the error it returned, or the
// one it panicked with.
func callFor(fn reflect.Value, in []reflect.Value) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
				return
			}
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	out := fn.Call(in)
	if len(out) == 0 {
		return errors.New("returned nothing")
	}
	e, _ := out[len(out)-1].Interface().(error)
	return e
}

// A set field is called with the method's arguments, and what it
// returns is the method's answer.
func TestSetFieldAnswers(t *testing.T) {
	want := []loom.FileEdit{{Path: "main.go"}}
	var asked loom.EditQuery
	es := &fake.EditStore{EditsFn: func(_ context.Context, q loom.EditQuery) ([]loom.FileEdit, error) {
		asked = q
		return want, nil
	}}
	got, err := es.Edits(t.Context(), loom.EditQuery{Under: "/src"})
	if err != nil || !reflect.DeepEqual(got, want) || asked.Under != "/src" {
		t.Errorf("Edits = %v, %v (asked %+v), want %v", got, err, asked, want)
	}
}
