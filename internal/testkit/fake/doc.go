// Package fake holds one small fake per service of package loom, so
// that a test of code that takes one service fakes that service, not a
// whole store: a struct with a function field per method, named after
// the method with "Fn" added (EditStore.EditsFn for EditStore.Edits),
// and methods that call the field.
//
// The rule: a test sets the fields of the methods it expects to be
// called, and no other. A method whose field is nil never answers with
// zero values as if it had nothing: it returns an error that names the
// method (it panics, which fails the test, where the method returns no
// error), so a call the test did not expect shows as that call.
//
// A test that needs what a store does (its queries, its transactions,
// what one write leaves for the next read) opens a store (storetest,
// cmdtest.Store); a fake stands where the code under test takes one
// service, or loom.Reader, and the test says what it answers.
// TestEveryMethodHasItsField checks every method of each service has
// its field.
package fake
