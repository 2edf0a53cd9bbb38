package cli_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/clitest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// One letter means one thing everywhere: across every command of the
// tree, a short flag stands for one long name only (-L is --limit in
// list, search, usage and show; -n is --name).
func TestShortFlagsMeanOneThing(t *testing.T) {
	t.Parallel()
	ios, _, _, _ := term.Test()
	root := cli.NewRootCmd(command.NewInvocation(&cli.Factory{IO: ios}))
	longs := map[string]map[string][]string{} // letter → long name → commands
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		visit := func(fl *pflag.Flag) {
			if fl.Shorthand == "" {
				return
			}
			if longs[fl.Shorthand] == nil {
				longs[fl.Shorthand] = map[string][]string{}
			}
			longs[fl.Shorthand][fl.Name] = append(longs[fl.Shorthand][fl.Name], cmd.CommandPath())
		}
		cmd.LocalFlags().VisitAll(visit)
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(root)
	if len(longs) == 0 {
		t.Fatal("no short flag found: the walk sees no flags")
	}
	for letter, names := range longs {
		if len(names) < 2 {
			continue
		}
		var say []string
		for name, cmds := range names {
			say = append(say, fmt.Sprintf("--%s in %s", name, strings.Join(cmds, ", ")))
		}
		slices.Sort(say)
		t.Errorf("-%s means %s", letter, strings.Join(say, "; "))
	}
	if got := longs["L"]["limit"]; !slices.Contains(got, "loom session show") {
		t.Errorf("-L is not --limit of session show: %v", got)
	}
}

// Help writes a flag whose value may be left out as --resume [REF], not
// with the blank that marks the picker in code.
func TestHelpShowsOptionalValue(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	for _, args := range [][]string{{"chat", "--help"}, {"--help"}} {
		out := fx.MustExec(t, args...)
		if !strings.Contains(out, "-r, --resume [REF]") || strings.Contains(out, `[=" "]`) {
			t.Errorf("loom %s:\n%s", strings.Join(args, " "), out)
		}
	}
	for _, args := range [][]string{{"search", "--help"}, {"team", "sync", "--help"}, {"blame", "--help"}} {
		out := fx.MustExec(t, args...)
		if !strings.Contains(out, "--team [NAME]") || strings.Contains(out, `[=" "]`) {
			t.Errorf("loom %s:\n%s", strings.Join(args, " "), out)
		}
	}
}

// A mistyped command is named with the commands it may be a typo of.
func TestUnknownCommandSuggests(t *testing.T) {
	t.Parallel()
	fx := clitest.NewEmptyFixture(t)
	for args, want := range map[string]string{
		"sesion list":  `unknown command "sesion" for "loom"; did you mean session`,
		"session lsit": `unknown command "lsit" for "loom session"; did you mean list?`,
		// A command that lives elsewhere is named by its path.
		"session search flaky": `unknown command "search" for "loom session"; did you mean 'loom search'?`,
		"sync usage":           `did you mean 'loom usage'?`,
	} {
		r := fx.Exec(t, "", strings.Fields(args)...)
		if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, want) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("loom %s: exit %d, stderr %q; want %q", args, r.Code, r.Stderr, want)
		}
	}
}

// One long name has one letter everywhere: a flag that has a short form
// in one command has it in every command that has the flag, unless that
// command gives the letter to another flag (-n is --name on chat, run,
// fork, team join and token create; -t is --turn on show, fork, rewind).
func TestLongFlagsHaveOneLetter(t *testing.T) {
	t.Parallel()
	ios, _, _, _ := term.Test()
	root := cli.NewRootCmd(command.NewInvocation(&cli.Factory{IO: ios}))
	letters := map[string]string{} // long name → its letter somewhere
	var all []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		all = append(all, cmd)
		cmd.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if fl.Shorthand != "" {
				letters[fl.Name] = fl.Shorthand
			}
		})
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(root)
	for _, cmd := range all {
		cmd.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			letter, ok := letters[fl.Name]
			if !ok || fl.Shorthand == letter {
				return
			}
			if other := cmd.Flags().ShorthandLookup(letter); other != nil && other.Name != fl.Name {
				return // the letter is another flag's here
			}
			t.Errorf("%s: --%s has no -%s, as it has elsewhere", cmd.CommandPath(), fl.Name, letter)
		})
	}
}
