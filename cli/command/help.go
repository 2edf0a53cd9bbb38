package command

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/loomhq/loom/cli/term"
)

// optionalValueMark is how pflag's help writes a string flag whose value
// may be left out (--resume alone opens the picker): `REF[=" "]`, the
// blank being only how the code marks "no REF".
var optionalValueMark = fmt.Sprintf("[=%q]", PickRef)

// flagUsages is a flag set's help with a flag whose value may be left
// out written as `--resume [REF]`, its columns kept aligned.
func flagUsages(fs *pflag.FlagSet) string {
	out := fs.FlagUsages()
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.NoOptDefVal != PickRef {
			return
		}
		name, _ := pflag.UnquoteUsage(fl)
		from := name + optionalValueMark
		to := "[" + name + "]"
		out = strings.ReplaceAll(out, from, to+strings.Repeat(" ", len(from)-len(to)))
	})
	return out
}

var addTemplateFunc sync.Once

// UseFlagUsages makes cmd's help and usage, and its subcommands', write
// their flags with flagUsages.
func UseFlagUsages(cmd *cobra.Command) {
	// cobra keeps template functions in one map for the process: add
	// ours once, as command trees are built side by side (tests).
	addTemplateFunc.Do(func() { cobra.AddTemplateFunc("flagUsages", flagUsages) })
	t := cmd.UsageTemplate()
	for _, set := range []string{"LocalFlags", "InheritedFlags"} {
		t = strings.ReplaceAll(t, "."+set+".FlagUsages", "flagUsages ."+set)
	}
	cmd.SetUsageTemplate(t)
}

// WrapHelp makes cmd's help, and its subcommands', fit width() columns
// (the terminal's, 80 when output is no terminal): the paragraphs of
// prose of its description are wrapped again as wholes at 80 columns, or
// the terminal's when it is narrower (term.ReflowProse), and each other
// line wider than the terminal is wrapped at spaces and goes on at its
// description's column.
func WrapHelp(cmd *cobra.Command, width func() int) {
	render := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		out := c.OutOrStdout()
		var buf bytes.Buffer
		w := width()
		long := c.Long
		c.Long = term.ReflowProse(long, min(w, 80))
		c.SetOut(&buf)
		render(c, args)
		c.SetOut(out)
		c.Long = long
		fmt.Fprint(out, term.WrapColumns(buf.String(), w))
	})
}

// UnknownCommand is the error for a word that is not a subcommand of
// cmd, with the commands it may be a typo of.
func UnknownCommand(cmd *cobra.Command, name string) error {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default
	}
	hint := ""
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		hint = "; did you mean " + strings.Join(s, " or ") + "?"
	} else if s := Elsewhere(cmd.Root(), name); len(s) > 0 {
		// loom session search: the command is loom search.
		hint = "; did you mean '" + strings.Join(s, "' or '") + "'?"
	}
	return UsageErrorf("unknown command %q for %q%s (see '%s --help')", name, cmd.CommandPath(), hint, cmd.CommandPath())
}

// wholeTrees are the roots built with one subcommand (Partial), each
// with what builds its whole tree.
var wholeTrees sync.Map // *cobra.Command → func() *cobra.Command

// Partial records that root was built with one subcommand alone, and
// whole builds the whole tree: Elsewhere looks there.
func Partial(root *cobra.Command, whole func() *cobra.Command) {
	wholeTrees.Store(root, whole)
}

// Elsewhere returns the paths of the visible commands under root named
// name (or with it as an alias), in the whole tree when root was built
// with one command (Partial).
func Elsewhere(root *cobra.Command, name string) []string {
	if whole, ok := wholeTrees.Load(root); ok {
		root = whole.(func() *cobra.Command)()
	}
	var out []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || !sub.IsAvailableCommand() {
				continue
			}
			if sub.Name() == name || slices.Contains(sub.Aliases, name) {
				out = append(out, sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(root)
	return out
}

// PickRef is the value of a flag whose value was left out: -r without a
// REF (choose the session in the picker), --team without a NAME
// (OnlyTeam). A title is trimmed and a key has no spaces, so no REF is
// this.
const PickRef = " "

// Group makes cmd the command that groups subs (loom session, loom
// token …): alone it prints its help, and a word that names none of subs
// is a usage error (NoArgs), not the help.
func Group(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.Args = NoArgs
	cmd.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	cmd.AddCommand(subs...)
	return cmd
}
