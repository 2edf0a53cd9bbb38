package warp

import "testing"

// FuzzQuery reads arbitrary text as a query's input: no panic.
func FuzzQuery(f *testing.F) {
	f.Add(`[{"Query":{"text":"hi"}}]`)
	f.Fuzz(func(t *testing.T, s string) {
		_ = query(s)
		_ = stamp(s)
	})
}
