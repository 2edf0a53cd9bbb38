package conformance

import (
	"reflect"
	"slices"
	"testing"

	"github.com/loomhq/loom"
)

// Every field of loom.Services has its line in Capabilities, in the
// order of the fields: a capability added to the engines is added to
// the suite, required or not, before any engine's tests pass.
func TestCapabilitiesCoverServices(t *testing.T) {
	var fields, names []string
	typ := reflect.TypeFor[loom.Services]()
	for i := range typ.NumField() {
		fields = append(fields, typ.Field(i).Name)
	}
	for _, c := range Capabilities {
		names = append(names, c.Name)
	}
	if !slices.Equal(fields, names) {
		t.Errorf("conformance.Capabilities = %v\nloom.Services' fields = %v", names, fields)
	}
	var all loom.Services
	v := reflect.ValueOf(&all).Elem()
	for i, c := range Capabilities {
		if i >= v.NumField() {
			break
		}
		if c.has(all) {
			t.Errorf("%s is had by empty services", c.Name)
		}
	}
}
