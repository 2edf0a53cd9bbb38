// Package cmdtest helps the tests of loom's command packages: it builds
// a command on a bare invocation and returns the options the command
// would run with, as gh's tests do through a command's runF.
package cmdtest

import (
	"io"
	"testing"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

// Options builds the command newCmd makes, on an invocation whose
// environment is empty and whose streams are buffers, runs it with args
// and returns the options it passed its runF (the command's run is not
// called).
func Options[O any](t testing.TB, newCmd func(*command.Invocation, func(*O) error) *cobra.Command, args ...string) *O {
	t.Helper()
	ios, _, _, _ := term.Test()
	inv := command.NewInvocation(&command.Factory{IO: ios, Env: func(string) string { return "" }})
	var got *O
	cmd := newCmd(inv, func(o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%s %v: %v", cmd.Name(), args, err)
	}
	if got == nil {
		t.Fatalf("%s %v did not call runF", cmd.Name(), args)
	}
	return got
}
