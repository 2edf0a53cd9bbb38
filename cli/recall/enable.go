package recall

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/paths"
)

// EnableOptions are the options of `loom recall enable` and `disable`.
type EnableOptions struct {
	IO *term.IOStreams
	// Project is the working directory's project.
	Project func() (loom.Project, error)
	// Dirs are loom's directories, where the setting is kept.
	Dirs func() (paths.Dirs, error)

	// Enable is true for enable, false for disable.
	Enable bool
}

func newCmdEnable(inv *command.Invocation, enable bool, runF func(*EnableOptions) error) *cobra.Command {
	opts := &EnableOptions{IO: inv.IO, Project: inv.Project, Dirs: inv.Dirs, Enable: enable}
	use, short := "enable", "Let the agents' recall hooks add context in this project"
	if !enable {
		use, short = "disable", "Stop the agents' recall hooks in this project"
	}
	return &cobra.Command{
		Use: use, Short: short, Args: command.ArgsBetween(0, 0),
		Example: "  cd ~/src/api && loom recall " + use,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return enableRun(opts)
		},
	}
}

func enableRun(opts *EnableOptions) error {
	p, err := opts.Project()
	if err != nil {
		return err
	}
	if err := setEnabled(opts.Dirs, p, opts.Enable); err != nil {
		return err
	}
	state := "enabled"
	if !opts.Enable {
		state = "disabled"
	}
	fmt.Fprintf(opts.IO.Out, "Recall %s for project %s (%s).\n", state, p.Name, p.Root)
	return nil
}

// marker is the file whose presence enables recall hooks for project p.
func marker(dirsOf func() (paths.Dirs, error), p loom.Project) (string, error) {
	dirs, err := dirsOf()
	if err != nil {
		return "", err
	}
	return filepath.Join(dirs.Data, "recall", p.ID), nil
}

func enabled(dirs func() (paths.Dirs, error), p loom.Project) (bool, error) {
	m, err := marker(dirs, p)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(m)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func setEnabled(dirs func() (paths.Dirs, error), p loom.Project, on bool) error {
	m, err := marker(dirs, p)
	if err != nil {
		return err
	}
	if !on {
		if err := os.Remove(m); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("disable recall: %w", err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(m), 0o700); err != nil {
		return fmt.Errorf("enable recall: %w", err)
	}
	if err := os.WriteFile(m, []byte(p.Root+"\n"), 0o600); err != nil {
		return fmt.Errorf("enable recall: %w", err)
	}
	return nil
}
