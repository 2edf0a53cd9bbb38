package cli

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
	"github.com/loomhq/loom/paths"
)

// Paths prints every directory and file loom uses, a tab-separated line
// each when piped, or as one JSON object in the same order, the store's
// password left out; it creates none of them.
func TestPathsRun(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	d := paths.Dirs{Data: filepath.Join(home, "data"), State: filepath.Join(home, "state"), Config: filepath.Join(home, "config"), Cache: filepath.Join(home, "cache")}
	options := func(json bool) *PathsOptions {
		ios, _, _, _ := term.Test()
		return &PathsOptions{IO: ios, User: "alice", JSON: json,
			Dirs:  func() (paths.Dirs, error) { return d, nil },
			DBURL: func() (string, error) { return "postgres://loom:hunter2@db.example/loom", nil }}
	}
	want := [][2]string{
		{"data", d.Data}, {"state", d.State}, {"config", d.Config}, {"cache", d.Cache},
		{"db", "postgres://loom:xxxxx@db.example/loom"}, {"logs", d.LogsDir()}, {"memory", d.MemoryFile()},
		{"user", d.UserFile()}, {"config_file", d.ConfigFile()}, {"profiles", d.ProfilesDir()},
		{"history", d.HistoryFile()}, {"locks", d.LocksDir()}, {"serve_token", d.ServeTokenFile("alice")},
	}

	opts := options(false)
	if err := pathsRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ := cmdtest.Outputs(opts.IO)
	var lines []string
	for _, w := range want {
		lines = append(lines, w[0]+"\t"+w[1])
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); !slices.Equal(got, lines) {
		t.Errorf("paths printed:\n%s\nwant:\n%s", out, strings.Join(lines, "\n"))
	}

	opts = options(true)
	if err := pathsRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ = cmdtest.Outputs(opts.IO)
	dec := json.NewDecoder(strings.NewReader(out))
	var got [][2]string
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("--json printed %q, not an object", out)
	}
	for dec.More() {
		name, err1 := dec.Token()
		path, err2 := dec.Token()
		if err := errors.Join(err1, err2); err != nil {
			t.Fatalf("--json printed %q: %v", out, err)
		}
		got = append(got, [2]string{name.(string), path.(string)})
	}
	if !slices.Equal(got, want) {
		t.Errorf("--json gave %q, want %q", got, want)
	}

	if _, err := os.Stat(d.Data); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("paths made the data directory (%v)", err)
	}
}

// Version prints the version a release stamps in, with Go's version,
// the platform, the commit and the date, or as JSON.
func TestVersionRun(t *testing.T) {
	t.Parallel()
	options := func(json bool) *VersionOptions {
		ios, _, _, _ := term.Test()
		return &VersionOptions{IO: ios, Version: "1.4.0", Commit: "0123456789ab", Date: "2026-01-02T10:00:00Z", JSON: json}
	}
	opts := options(false)
	if err := versionRun(opts); err != nil {
		t.Fatal(err)
	}
	want := "loom 1.4.0 (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ", commit 0123456789ab, 2026-01-02T10:00:00Z)\n"
	if out, _ := cmdtest.Outputs(opts.IO); out != want {
		t.Errorf("version printed %q, want %q", out, want)
	}

	opts = options(true)
	if err := versionRun(opts); err != nil {
		t.Fatal(err)
	}
	out, _ := cmdtest.Outputs(opts.IO)
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json printed %q: %v", out, err)
	}
	if got["version"] != "1.4.0" || got["commit"] != "0123456789ab" || got["date"] != "2026-01-02T10:00:00Z" ||
		got["go"] != runtime.Version() || got["os"] != runtime.GOOS || got["arch"] != runtime.GOARCH {
		t.Errorf("--json printed %v", got)
	}
}

// A loom that no release build stamped still says what it is, from
// what Go recorded of its build: the module's version for go install
// …/cmd/loom@VERSION (no commit: it builds from the module cache), the
// commit of a clone, "dev" with nothing known. What a release stamps in
// wins.
func TestBuiltVersion(t *testing.T) {
	t.Parallel()
	clone := &debug.BuildInfo{Main: debug.Module{Path: "github.com/loomhq/loom", Version: "v0.0.0-20261127135534-b5648260385b+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "b5648260385b4f0e2cb6a3f3c3b2d5e0a1f9c8d7"},
			{Key: "vcs.time", Value: "2026-11-27T13:55:34Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  [3]string
	}{
		{"go install @v1.4.0", "", "", "", &debug.BuildInfo{Main: debug.Module{Path: "github.com/loomhq/loom", Version: "v1.4.0"}},
			[3]string{"v1.4.0", "", ""}},
		{"go install @latest of an untagged commit", "", "", "", &debug.BuildInfo{Main: debug.Module{Path: "github.com/loomhq/loom", Version: "v0.0.0-20261127135534-b5648260385b"}},
			[3]string{"v0.0.0-20261127135534-b5648260385b", "", ""}},
		{"go build in a modified clone", "", "", "", clone,
			[3]string{"v0.0.0-20261127135534-b5648260385b+dirty", "b5648260385b-dirty", "2026-11-27T13:55:34Z"}},
		{"a release build", "v1.4.0", "0123456789ab", "2026-01-02T10:00:00Z", clone,
			[3]string{"v1.4.0", "0123456789ab", "2026-01-02T10:00:00Z"}},
		{"go build without version control", "", "", "", &debug.BuildInfo{Main: debug.Module{Path: "github.com/loomhq/loom", Version: "(devel)"}},
			[3]string{"dev", "", ""}},
		{"no build information", "", "", "", nil, [3]string{"dev", "", ""}},
	} {
		v, commit, date := builtVersion(c.version, c.commit, c.date, c.bi)
		if got := [3]string{v, commit, date}; got != c.want {
			t.Errorf("%s: version, commit, date = %q, want %q", c.name, got, c.want)
		}
	}
}

// Paths and version fill their options from the global flags; they
// take no arguments.
func TestNewCmdPathsVersionOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdPaths)
	if got.JSON || got.User != "local" || got.Dirs == nil || got.DBURL == nil {
		t.Errorf("paths options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdPaths, "--json", "--user", "alice"); !got.JSON || got.User != "alice" {
		t.Errorf("paths --json --user alice: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdPaths, "db"), "takes no arguments")

	if got := cmdtest.Options(t, newCmdVersion); got.JSON {
		t.Errorf("version options: %+v", got)
	}
	if got := cmdtest.Options(t, newCmdVersion, "--json"); !got.JSON {
		t.Errorf("version --json: %+v", got)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdVersion, "1.4.0"), "takes no arguments")
}
