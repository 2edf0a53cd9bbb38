package pi

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom/importer"
)

// Format reads the Pi coding agent's session files. The zero value is
// ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is Pi's name in loom: the surface of its imported sessions and the
// TOOL of `loom session import --from TOOL`.
const Tool = "pi"

func init() { importer.Register(Format{}) }

// The variables pi reads for its directories: its agent directory
// (~/.pi/agent by default, sessions under its sessions/), and a session
// directory that replaces <agent dir>/sessions.
const (
	EnvAgentDir   = "PI_CODING_AGENT_DIR"
	EnvSessionDir = "PI_CODING_AGENT_SESSION_DIR"
)

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": pi calls many providers, and every reply names its own.
func (Format) Provider() string { return "" }

// Roots are $PI_CODING_AGENT_SESSION_DIR when it is set, and
// $PI_CODING_AGENT_DIR/sessions (~/.pi/agent/sessions by default), where
// pi keeps a directory of sessions per working directory. A leading ~ in
// either is the home directory, as pi reads it.
func (Format) Roots(env func(string) string, home string) []string {
	get := importer.EnvPath(env, home)
	var roots []string
	if dir := get(EnvSessionDir); dir != "" {
		roots = append(roots, dir)
	}
	agent := get(EnvAgentDir)
	if agent == "" && home != "" {
		agent = filepath.Join(home, ".pi", "agent")
	}
	if agent != "" {
		dir := filepath.Join(agent, "sessions")
		if len(roots) == 0 || filepath.Clean(roots[0]) != dir {
			roots = append(roots, dir)
		}
	}
	return roots
}

// Bundles lists every *.jsonl file under root, one bundle each (pi names
// them <time>_<session id>.jsonl, in a directory per working directory);
// root itself may be one file, read whatever its name. Symbolic links are
// followed; directories that cannot be listed below root are reported
// beside the bundles found.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return strings.HasSuffix(d.Name(), ".jsonl")
	})
}

// Read reads one session file into its session and the forks of its
// abandoned branches.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	path := b.Name()
	if path == "" {
		return nil, errEmpty
	}
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("pi: %w", err)
	}
	defer f.Close()
	return read(ctx, path, f)
}
