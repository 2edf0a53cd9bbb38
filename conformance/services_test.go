package conformance

import (
	"reflect"
	"slices"
	"testing"

	"github.com/loomhq/loom"
)

// Every field of loom.Optional has its line in Capabilities, in the
// order of the fields: an optional capability added to the engines is
// added to the suite before any engine's tests pass.
func TestCapabilitiesCoverServices(t *testing.T) {
	var fields, names []string
	typ := reflect.TypeFor[loom.Optional]()
	for i := range typ.NumField() {
		fields = append(fields, typ.Field(i).Name)
	}
	for _, c := range Capabilities {
		names = append(names, c.Name)
	}
	if !slices.Equal(fields, names) {
		t.Errorf("conformance.Capabilities = %v\nloom.Optional's fields = %v", names, fields)
	}
	var none loom.Optional
	for _, c := range Capabilities {
		if c.has(none) {
			t.Errorf("%s is had by empty services", c.Name)
		}
	}
}
