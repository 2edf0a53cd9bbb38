// Package cmdtest helps the tests of loom's command packages: it builds
// a command on a bare invocation and returns the options the command
// would run with, as gh's tests do through a command's runF.
package cmdtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/server"
	"github.com/loomhq/loom/sqlite"
)

// Options builds the command newCmd makes, on an invocation whose
// environment is empty and whose streams are buffers, runs it with args
// and returns the options it passed its runF (the command's run is not
// called). The global flags (--db, --user, --json, --no-color) are
// accepted as main's root command accepts them.
func Options[O any](t testing.TB, newCmd func(*command.Invocation, func(*O) error) *cobra.Command, args ...string) *O {
	t.Helper()
	got, err := execute(newCmd, args)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	if got == nil {
		t.Fatalf("%v did not call runF", args)
	}
	return got
}

// Rejects builds the command newCmd makes as Options does, runs it with
// args and returns the error it refuses them with; it fails the test
// when the command accepts them and calls its runF, or refuses them
// with another error than a usage error (exit status 2).
func Rejects[O any](t testing.TB, newCmd func(*command.Invocation, func(*O) error) *cobra.Command, args ...string) error {
	t.Helper()
	err := Fails(t, newCmd, args...)
	var usage *command.UsageError
	if !errors.As(err, &usage) {
		t.Errorf("%q: %v, want a usage error (exit 2)", args, err)
	}
	return err
}

// Fails builds the command newCmd makes as Options does, runs it with
// args and returns the error it stops with, whatever its exit status;
// it fails the test when the command accepts them and calls its runF.
func Fails[O any](t testing.TB, newCmd func(*command.Invocation, func(*O) error) *cobra.Command, args ...string) error {
	t.Helper()
	got, err := execute(newCmd, args)
	if err == nil || got != nil {
		t.Fatalf("%q was accepted (options %+v, error %v)", args, got, err)
	}
	return err
}

// Refused fails the test unless err is a usage error (exit status 2)
// that says want.
func Refused(t testing.TB, err error, want string) {
	t.Helper()
	var usage *command.UsageError
	if !errors.As(err, &usage) || !strings.Contains(usage.Msg, want) {
		t.Errorf("error %v, want a usage error saying %q", err, want)
	}
}

// Outputs are what was printed on the stdout and stderr of ios, streams
// on buffers (term.Test).
func Outputs(ios *term.IOStreams) (out, errOut string) {
	return ios.Out.(fmt.Stringer).String(), ios.ErrOut.(fmt.Stringer).String()
}

// WaitFor waits up to 10 s for s, a buffer a command writes to while it
// runs, to hold want, and fails the test when it does not.
func WaitFor(t testing.TB, s fmt.Stringer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q in:\n%s", want, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Hub serves loom serve's handler on st, a hub for the commands that
// reach one (share, sync), until the test ends.
func Hub(t testing.TB, st *sqlite.Store) *httptest.Server {
	t.Helper()
	srv := server.New(server.Config{Store: st, Tokens: st})
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ts.Close()
	})
	return ts
}

// Store is a new SQLite store in a temporary directory, closed when the
// test ends.
func Store(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func execute[O any](newCmd func(*command.Invocation, func(*O) error) *cobra.Command, args []string) (*O, error) {
	ios, _, _, _ := term.Test()
	inv := command.NewInvocation(&command.Factory{IO: ios, Env: func(string) string { return "" }})
	var got *O
	cmd := newCmd(inv, func(o *O) error { got = o; return nil })
	inv.AddGlobalFlags(cmd.PersistentFlags())
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	// As main's root command does: a flag that does not parse is a
	// usage error.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return command.UsageErrorf("%v", err) })
	return got, cmd.Execute()
}
