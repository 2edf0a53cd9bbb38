package secrets

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// timeRefusal is an error as an engine's search refuses for running out
// of time: coded, and loom.ErrSearchTime in its chain.
type timeRefusal struct{ coded *loom.Error }

func (e timeRefusal) Error() string   { return e.coded.Error() }
func (e timeRefusal) Unwrap() []error { return []error{e.coded, loom.ErrSearchTime} }

// A coded error through the gate has its message redacted and keeps
// what else its chain said: a search refused for running out of time is
// still loom.ErrSearchTime (recall then answers nothing, partial, and a
// hook stays silent, where it once failed with the refusal's message).
func TestGateErrorKeepsItsChain(t *testing.T) {
	g := Default().Gate(nil)
	key := "sk-proj-Zq8mN3kL9xT2vB7wR4yUk29sLmZ8vXq4rT7yN2pWbC5dE6fG7hJ8"
	refusal := fmt.Errorf("search: %w", timeRefusal{loom.Errorf(loom.EINVALID, "search stopped for %q", key)})
	err := g.err(refusal)
	if !errors.Is(err, loom.ErrSearchTime) {
		t.Errorf("%v: not ErrSearchTime through the gate", err)
	}
	if loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("%v: code %s, want EINVALID", err, loom.ErrorCode(err))
	}
	var coded *loom.Error
	if !errors.As(err, &coded) || coded.Message == "" {
		t.Fatalf("%v: no coded error", err)
	}
	for _, s := range []string{err.Error(), coded.Message} {
		if s == "" || strings.Contains(s, key) {
			t.Errorf("the error through the gate says %q", s)
		}
	}
}
