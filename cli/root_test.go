package cli

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/cli/chat"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// rootChat runs bare loom with args, on streams that are not a
// terminal, and returns the options it would chat with (nil when it
// refused them) and its error.
func rootChat(args ...string) (*chat.Options, error) {
	ios, _, _, _ := term.Test()
	inv := command.NewInvocation(&command.Factory{IO: ios, Env: func(string) string { return "" }})
	var got *chat.Options
	root := newRootCmd(inv, func(o *chat.Options) error { got = o; return nil }, "")
	root.SetArgs(args)
	err := root.Execute()
	return got, err
}

// Bare loom is loom chat: its flags fill chat's options as chat's do,
// and it refuses what chat refuses.
func TestRootChatOptions(t *testing.T) {
	t.Parallel()
	got, err := rootChat()
	if err != nil || got == nil || got.Choice != (command.SessionChoice{}) || got.User != "local" || got.CreateStore == nil || got.OpenConversation == nil {
		t.Fatalf("bare loom: %+v, %v", got, err)
	}
	got, err = rootChat("--new", "-n", "retry backoff", "--model", "gpt-test", "--profile", "terse", "--no-resume-hint", "--user", "alice")
	if err != nil || got.Choice != (command.SessionChoice{New: true, Name: "retry backoff"}) || got.Agent != (agent.Choice{Model: "gpt-test", Profile: "terse"}) ||
		!got.NoResumeHint || got.User != "alice" {
		t.Errorf("loom --new -n --model --profile --no-resume-hint --user: %+v, %v", got, err)
	}
	if got, err := rootChat("-r", "flaky test", "--full-history"); err != nil || got.Choice != (command.SessionChoice{Resume: "flaky test"}) || !got.FullHistory {
		t.Errorf("loom -r REF --full-history: %+v, %v", got, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-r"}, "-r needs a session REF when not on a terminal"},
		{[]string{"--new", "-c"}, "use only one of --new, --continue, --resume and --key"},
		{[]string{"--full-history", "--no-history"}, "use only one of --full-history and --no-history"},
		{[]string{"--key", "today"}, "--key: key \"today\" must be SURFACE:NAME"},
	} {
		got, err := rootChat(c.args...)
		if got != nil {
			t.Errorf("loom %q was accepted: %+v", c.args, got)
		}
		cmdtest.Refused(t, err, c.want)
	}
}

// TestSubcommandsNamed: each subcommand is listed under its own name, so that a process that names one builds it
// alone; and that one finds the same command, with the same flags, as
// the whole tree does, for every command and subcommand beneath it.
func TestSubcommandsNamed(t *testing.T) {
	t.Parallel()
	inv := command.NewInvocation(&command.Factory{IO: &term.IOStreams{}})
	whole := NewRootCmd(inv)
	var names []string
	for _, c := range whole.Commands() {
		names = append(names, c.Name())
	}
	var listed []string
	for _, c := range subcommands {
		listed = append(listed, c.name)
	}
	slices.Sort(listed)
	if fmt.Sprint(names) != fmt.Sprint(listed) {
		t.Fatalf("the tree's commands %v, listed %v", names, listed)
	}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if len(path) > 0 {
			one := newRootCmd(command.NewInvocation(&command.Factory{IO: &term.IOStreams{}}), nil, commandNamed(path))
			if len(one.Commands()) != 1 {
				t.Errorf("%v built %d commands, want 1", path, len(one.Commands()))
			}
			got, _, err := one.Find(path)
			if err != nil || got.CommandPath() != c.CommandPath() || flagNames(got) != flagNames(c) {
				t.Errorf("%v: found %q (%v) with flags %s, the whole tree %q with %s", path, got.CommandPath(), err, flagNames(got), c.CommandPath(), flagNames(c))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(whole, nil)
	for _, args := range [][]string{nil, {"--json", "blame"}, {"sessions"}, {"bla"}, {"-h"}} {
		if n := commandNamed(args); n != "" {
			t.Errorf("%v builds %q alone, want the whole tree", args, n)
		}
	}
}

// flagNames are a command's flags, its own and inherited, by name.
func flagNames(c *cobra.Command) string {
	var out []string
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { out = append(out, f.Name+"@") })
	c.LocalFlags().VisitAll(func(f *pflag.Flag) { out = append(out, f.Name) })
	return strings.Join(out, " ")
}
