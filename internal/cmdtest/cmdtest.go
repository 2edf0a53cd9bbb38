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
	got, name, err := execute(newCmd, args)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if got == nil {
		t.Fatalf("%s %v did not call runF", name, args)
	}
	return got
}

// Rejects builds the command newCmd makes as Options does, runs it with
// args and returns the error it refuses them with, failing the test when
// it takes them (calls its runF).
func Rejects[O any](t testing.TB, newCmd func(*command.Invocation, func(*O) error) *cobra.Command, args ...string) error {
	t.Helper()
	got, name, err := execute(newCmd, args)
	if got != nil || err == nil {
		t.Fatalf("%s %v was taken (options %+v, error %v), want it refused", name, args, got, err)
	}
	return err
}

// execute runs the command newCmd makes with args on a bare invocation:
// the options it passed its runF (nil when it did not call it), the
// command's name and its error.
func execute[O any](newCmd func(*command.Invocation, func(*O) error) *cobra.Command, args []string) (*O, string, error) {
	ios, _, _, _ := term.Test()
	inv := command.NewInvocation(&command.Factory{IO: ios, Env: func(string) string { return "" }})
	var got *O
	cmd := newCmd(inv, func(o *O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.Execute()
	return got, cmd.Name(), err
}
