package importer_test

import (
	"path/filepath"
	"testing"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/forge"
	"github.com/loomhq/loom/importer/gptme"
	"github.com/loomhq/loom/importer/omp"
	"github.com/loomhq/loom/importer/pi"
)

// A variable naming a tool's directory is read as the tool reads it:
// trimmed, ~ the home directory; a nil environment sets nothing.
func TestEnvPath(t *testing.T) {
	env := map[string]string{
		"PLAIN":  "/data/logs",
		"SPACED": "  /data/logs \n",
		"TILDE":  "~/.pi/agent",
		"HOME":   "~",
		"USERS":  "~bob/logs",
		"MID":    "/a/~/b",
	}
	home := filepath.FromSlash("/home/ann")
	get := importer.EnvPath(func(k string) string { return env[k] }, home)
	for k, want := range map[string]string{
		"PLAIN":  "/data/logs",
		"SPACED": "/data/logs",
		"TILDE":  filepath.Join(home, ".pi", "agent"),
		"HOME":   home,
		"USERS":  "~bob/logs", // another user's home is not ours to guess
		"MID":    "/a/~/b",
		"UNSET":  "",
	} {
		if got := get(k); got != want {
			t.Errorf("%s=%q: %q, want %q", k, env[k], got, want)
		}
	}
	if got := importer.EnvPath(func(k string) string { return env[k] }, "")("TILDE"); got != "~/.pi/agent" {
		t.Errorf("without a home: %q", got)
	}
	if got := importer.EnvPath(nil, home)("PLAIN"); got != "" {
		t.Errorf("a nil environment: %q", got)
	}
}

// The importers that read a directory from the environment read it by
// EnvPath: trimmed, ~ the home directory.
func TestRootsFromTheEnvironment(t *testing.T) {
	home := filepath.FromSlash("/home/ann")
	for _, tc := range []struct {
		f    importer.Format
		env  map[string]string
		want string
	}{
		{pi.Format{}, map[string]string{pi.EnvSessionDir: " ~/pi-sessions "}, filepath.Join(home, "pi-sessions")},
		{omp.Format{}, map[string]string{pi.EnvSessionDir: " ~/omp-sessions "}, filepath.Join(home, "omp-sessions")},
		{forge.Format{}, map[string]string{forge.EnvConfig: " ~/forge-data "}, filepath.Join(home, "forge-data")},
		{gptme.Format{}, map[string]string{"GPTME_LOGS_HOME": " ~/gptme-logs "}, filepath.Join(home, "gptme-logs")},
	} {
		roots := tc.f.Roots(func(k string) string { return tc.env[k] }, home)
		if len(roots) == 0 || roots[0] != tc.want {
			t.Errorf("%s with %v: roots %q, want %q first", tc.f.Tool(), tc.env, roots, tc.want)
		}
	}
}
