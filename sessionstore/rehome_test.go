package sessionstore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom/synclog"
)

// A rehome moves the stamps of the old host later than the last shared
// record to the new host, and only those, wherever they sit in a
// session's merged metadata, with their HLCs exact.
func TestRestamp(t *testing.T) {
	const old, to = synclog.HostID("old"), synclog.HostID("new")
	in := `{"Title":{"Value":"t","Stamp":{"hlc":1844674407370955161,"host":"old"}},` +
		`"Cwd":{"Value":"/","Stamp":{"hlc":5,"host":"old"}},` +
		`"Model":{"Value":"m","Stamp":{"hlc":1844674407370955161,"host":"other"}},` +
		`"Forks":[{"hlc":1844674407370955161,"host":"old"}]}`
	d := json.NewDecoder(strings.NewReader(in))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	restamp(v, old, to, 10)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Cwd":{"Stamp":{"hlc":5,"host":"old"},"Value":"/"},` +
		`"Forks":[{"hlc":1844674407370955161,"host":"new"}],` +
		`"Model":{"Stamp":{"hlc":1844674407370955161,"host":"other"},"Value":"m"},` +
		`"Title":{"Stamp":{"hlc":1844674407370955161,"host":"new"},"Value":"t"}}`
	if string(b) != want {
		t.Fatalf("restamped:\n%s\nwant\n%s", b, want)
	}
}
