package command_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
)

// invocation makes a run of the command line on ios with the global
// flags args, as Main parses them.
func invocation(t *testing.T, ios *term.IOStreams, env map[string]string, args ...string) *command.Invocation {
	t.Helper()
	inv := command.NewInvocation(&command.Factory{IO: ios, Env: func(k string) string { return env[k] }})
	fs := pflag.NewFlagSet("loom", pflag.ContinueOnError)
	inv.AddGlobalFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return inv
}

// jq runs a command that writes out under --jq expr and returns what
// reached standard output and the error the run ends with.
func jq(t *testing.T, tty bool, expr string, out ...string) (string, error) {
	t.Helper()
	ios, _, stdout, _ := term.Test()
	ios.SetStdoutTTY(tty)
	inv := invocation(t, ios, nil, "--jq", expr)
	if !inv.JSON() {
		t.Fatal("--jq does not imply --json")
	}
	if err := inv.StartOutput(); err != nil {
		return stdout.String(), err
	}
	for _, s := range out {
		if _, err := io.WriteString(inv.IO.Out, s); err != nil {
			t.Fatal(err)
		}
	}
	err := inv.FinishOutput()
	return stdout.String(), err
}

func TestJQ(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tty     bool
		expr    string
		out     []string
		want    string
		wantErr string
	}{
		{name: "string raw", expr: ".title", out: []string{`{"title":"plan","n":1}`}, want: "plan\n"},
		{name: "object on one line when piped", expr: "{n}", out: []string{`{"title":"plan","n":1}`}, want: "{\"n\":1}\n"},
		{name: "object indented on a terminal", tty: true, expr: "{n}", out: []string{`{"title":"plan","n":1}`}, want: "{\n  \"n\": 1\n}\n"},
		{name: "a stream of values, each filtered", expr: ".id", out: []string{"{\"id\":\"a\"}\n", "{\"id\":\"b\"}\n"}, want: "a\nb\n"},
		{name: "a value written in pieces", expr: ".[] | .id", out: []string{`[{"id":"a"},`, `{"id":"b"}]`}, want: "a\nb\n"},
		{name: "several results", expr: ".[]", out: []string{`[1, 2.5, 12345678901234567890]`}, want: "1\n2.5\n12345678901234567890\n"},
		{name: "halt stops quietly", expr: "halt", out: []string{`1`}, want: ""},
		{name: "an error the expression raises", expr: `error("no such field")`, out: []string{`1`}, wantErr: "--jq: error: no such field"},
		{name: "no JSON", expr: ".", out: []string{"Moved 3 sessions\n"}, wantErr: "--jq: the command printed no JSON (it may have no --json output)"},
		{name: "JSON then not", expr: ".", out: []string{"1\n", "oops"}, want: "1\n", wantErr: "--jq: the command's output: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jq(t, tc.tty, tc.expr, tc.out...)
			if got != tc.want {
				t.Errorf("output %q, want %q", got, tc.want)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// An expression that does not parse is a usage error of one line, and
// nothing stands between the command and standard output.
func TestJQBadExpression(t *testing.T) {
	for _, expr := range []string{".[", "nosuchfunction(1)"} {
		got, err := jq(t, false, expr)
		if err == nil || command.ExitCode(err) != command.ExitUsage || !strings.HasPrefix(err.Error(), "--jq: ") || strings.Contains(err.Error(), "\n") || got != "" {
			t.Errorf("--jq %q: %v (exit %d), output %q", expr, err, command.ExitCode(err), got)
		}
	}
}

// A command that goes on writing after the filter failed is never
// blocked: what it writes is drained.
func TestJQDrainsAfterAnError(t *testing.T) {
	ios, _, _, _ := term.Test()
	inv := invocation(t, ios, nil, "--jq", `error("stop")`)
	if err := inv.StartOutput(); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if _, err := fmt.Fprintf(inv.IO.Out, "{\"i\":%d}\n", i); err != nil {
			t.Fatal(err)
		}
	}
	if err := inv.FinishOutput(); err == nil || err.Error() != "--jq: error: stop" {
		t.Fatalf("FinishOutput = %v", err)
	}
	if err := inv.FinishOutput(); err != nil {
		t.Fatalf("a second FinishOutput: %v", err)
	}
}
