package cli

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/loomhq/loom/cli/command"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/paths"
)

// PathsOptions are the options of `loom paths`.
type PathsOptions struct {
	IO *term.IOStreams
	// Dirs says where loom keeps its files.
	Dirs func() (paths.Dirs, error)
	// DBURL is the store's URL.
	DBURL func() (string, error)
	User  string
	JSON  bool
}

// newCmdPaths builds loom paths. runF, when not nil, is called with the
// options instead of running the command (for tests).
func newCmdPaths(inv *command.Invocation, runF func(*PathsOptions) error) *cobra.Command {
	opts := &PathsOptions{
		IO:    inv.IO,
		Dirs:  inv.Dirs,
		DBURL: inv.DBURL,
	}
	cmd := &cobra.Command{
		Use:   "paths",
		Short: "Print where loom keeps its files",
		Long: `Print every directory and file loom uses, as resolved from LOOM_HOME,
the XDG variables (or the platform's directories), LOOM_DB and --db.`,
		Example: `  loom paths
  LOOM_HOME=/tmp/loom loom paths
  loom paths --json | jq -r .db`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.User, opts.JSON = inv.User(), inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return pathsRun(cmd.Context(), opts)
		},
	}
	return cmd
}

// pathEntry is one named path.
type pathEntry struct{ name, path string }

func pathsRun(_ context.Context, opts *PathsOptions) error {
	d, err := opts.Dirs()
	if err != nil {
		return err
	}
	db, err := opts.DBURL()
	if err != nil {
		return err
	}
	entries := []pathEntry{
		{"data", d.Data},
		{"state", d.State},
		{"config", d.Config},
		{"cache", d.Cache},
		{"db", command.RedactURL(db)},
		{"logs", d.LogsDir()},
		{"memory", d.MemoryFile()},
		{"user", d.UserFile()},
		{"config_file", d.ConfigFile()},
		{"profiles", d.ProfilesDir()},
		{"history", d.HistoryFile()},
		{"locks", d.LocksDir()},
		{"serve_token", d.ServeTokenFile(opts.User)},
	}
	ios := opts.IO
	if opts.JSON {
		// An ordered object: the same order as the text output.
		ios.Out.Write([]byte("{\n"))
		for i, e := range entries {
			comma := ","
			if i == len(entries)-1 {
				comma = ""
			}
			fmt.Fprintf(ios.Out, "  %q: %s%s\n", e.name, command.JSONString(e.path), comma)
		}
		_, err := ios.Out.Write([]byte("}\n"))
		return err
	}
	cs := ios.ColorScheme()
	tp := term.NewTable(ios)
	for _, e := range entries {
		tp.AddField(e.name, cs.Bold)
		tp.AddField(e.path, nil)
		tp.EndRow()
	}
	return tp.Render()
}

// VersionOptions are the options of `loom version`.
type VersionOptions struct {
	IO *term.IOStreams
	// Version, Commit and Date are what a release build stamps in.
	Version, Commit, Date string
	JSON                  bool
}

// newCmdVersion builds loom version. runF, when not nil, is called with
// the options instead of running the command (for tests).
func newCmdVersion(inv *command.Invocation, runF func(*VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: inv.IO, Version: inv.Version, Commit: inv.Commit, Date: inv.Date}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print loom's version",
		Example: `  loom version
  loom version --json`,
		Args: command.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = inv.JSON()
			if runF != nil {
				return runF(opts)
			}
			return versionRun(opts)
		},
	}
	return cmd
}

func versionRun(opts *VersionOptions) error {
	bi, _ := debug.ReadBuildInfo()
	v, commit, date := builtVersion(opts.Version, opts.Commit, opts.Date, bi)
	if opts.JSON {
		return command.WriteJSON(opts.IO.Out, struct {
			Version string `json:"version"`
			Commit  string `json:"commit,omitempty"`
			Date    string `json:"date,omitempty"`
			Go      string `json:"go"`
			OS      string `json:"os"`
			Arch    string `json:"arch"`
		}{v, commit, date, runtime.Version(), runtime.GOOS, runtime.GOARCH})
	}
	built := ""
	if commit != "" {
		built += ", commit " + commit
	}
	if date != "" {
		built += ", " + date
	}
	_, err := fmt.Fprintf(opts.IO.Out, "loom %s (%s, %s/%s%s)\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH, built)
	return err
}

// builtVersion says which loom this is: what a release build stamped in
// with -ldflags (make release, GoReleaser) and, where it stamped
// nothing, what Go recorded of the build in bi. A `go install
// github.com/loomhq/loom/cmd/loom@v1.4.0` records the module's version
// (v1.4.0, or a pseudo-version such as v0.0.0-20261127135534-b5648260385b
// for a commit without a tag) and no commit, since it builds from the
// module cache; a `go build` in a clone records the version Go derives
// from the checkout, the commit, its time and whether the tree was
// modified. With neither, the version is "dev".
func builtVersion(version, commit, date string, bi *debug.BuildInfo) (string, string, string) {
	stamped := commit != ""
	if bi != nil {
		if version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					commit = s.Value[:min(len(s.Value), 12)]
				}
			case "vcs.time":
				date = cmp.Or(date, s.Value)
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && !stamped && commit != "" {
			commit += "-dirty"
		}
	}
	return cmp.Or(version, "dev"), commit, date
}
