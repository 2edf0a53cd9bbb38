package command

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A command's help, through WrapHelp, shows a description's paragraph of
// prose reflowed: a line an edit made too long for the hand wrap leaves
// no one-word line behind.
func TestWrapHelpReflowsProse(t *testing.T) {
	cmd := &cobra.Command{
		Use:   "run PROMPT",
		Short: "Send one prompt",
		Long: "By default (or with --new) the prompt starts a new session; -c continues this project's\n" +
			"most recent session, --resume REF a given one, --key KEY the session with\n" +
			"that key.",
		Run: func(*cobra.Command, []string) {},
	}
	WrapHelp(cmd, func() int { return 80 })
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	para, _, _ := strings.Cut(out.String(), "\n\n")
	lines := strings.Split(para, "\n")
	for i, l := range lines {
		if len(l) > 80 || i < len(lines)-1 && len(l) < 60 {
			t.Errorf("line %d of the description is %d columns: %q\n%s", i, len(l), l, para)
		}
	}
}

// A group alone prints its help; a word that names none of its commands
// is a usage error, and one that does runs it.
func TestGroup(t *testing.T) {
	run := func(args ...string) (out string, ran bool, err error) {
		var b bytes.Buffer
		root := &cobra.Command{Use: "loom", SilenceErrors: true, SilenceUsage: true}
		root.AddCommand(Group(&cobra.Command{Use: "token <command>", Short: "Tokens"},
			&cobra.Command{Use: "list", RunE: func(*cobra.Command, []string) error { ran = true; return nil }}))
		root.SetOut(&b)
		root.SetErr(&b)
		root.SetArgs(args)
		err = root.Execute()
		return b.String(), ran, err
	}
	if out, _, err := run("token"); err != nil || !strings.Contains(out, "Available Commands") {
		t.Errorf("loom token alone: %v, printed %q; want its help", err, out)
	}
	if _, ran, err := run("token", "lsit"); ExitCode(err) != ExitUsage || ran {
		t.Errorf("loom token lsit: %v, ran %v; want a usage error", err, ran)
	}
	if _, ran, err := run("token", "list"); err != nil || !ran {
		t.Errorf("loom token list: %v, ran %v; want it run", err, ran)
	}
}
