// Package openclaw reads the sessions of OpenClaw (the openclaw
// command; Clawdbot and Moltbot before it was renamed), a gateway that
// runs the Pi agent for chats on many channels, for loom's importer.
//
// OpenClaw keeps its state in ~/.openclaw ($OPENCLAW_STATE_DIR), and
// Clawdbot and Moltbot kept theirs in ~/.clawdbot and ~/.moltbot: each
// agent's sessions are agents/<agent id>/sessions/<session id>.jsonl,
// in pi's session format (package pi reads them: header, entry tree,
// messages, tool calls and results, compactions, branches as forks).
// A transcript OpenClaw set aside when a session was reset or deleted
// (<id>.jsonl.reset.<time>, <id>.jsonl.deleted.<time>) is read too: it
// is the user's history. sessions.json, the index of which chat maps to
// which session, is not read.
//
// The layout was learnt from OpenClaw's documentation and the files its
// npm package writes, and from agentsview's and cass's readers of it.
package openclaw

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/pi"
)

// Format reads OpenClaw's sessions. The zero value is ready to use.
type Format struct{}

var _ importer.Format = Format{}

// Tool is OpenClaw's name in loom.
const Tool = "openclaw"

// EnvState moves OpenClaw's state directory (~/.openclaw).
const EnvState = "OPENCLAW_STATE_DIR"

func init() { importer.Register(Format{}) }

// Tool returns Tool.
func (Format) Tool() string { return Tool }

// Provider is "": every reply names its own.
func (Format) Provider() string { return "" }

// Roots are the agents directories of OpenClaw's state ($OPENCLAW_STATE_DIR
// or ~/.openclaw) and of Clawdbot's and Moltbot's before it.
func (Format) Roots(env func(string) string, home string) []string {
	var roots []string
	if d := importer.ToolDir(env, home, EnvState, ".openclaw"); d != "" {
		roots = append(roots, filepath.Join(d, "agents"))
	}
	if home != "" {
		roots = append(roots, filepath.Join(home, ".clawdbot", "agents"), filepath.Join(home, ".moltbot", "agents"))
	}
	return roots
}

// Bundles lists each transcript under root: <id>.jsonl, and those set
// aside on a reset or deletion; one bundle each.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	return importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return isTranscript(d.Name())
	})
}

// isTranscript reports whether name is a session's transcript.
func isTranscript(name string) bool {
	base, rest, ok := strings.Cut(name, ".jsonl")
	if !ok || base == "" {
		return false
	}
	return rest == "" || strings.HasPrefix(rest, ".reset.") || strings.HasPrefix(rest, ".deleted.")
}

// Read reads one transcript with pi's reader.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	f, _, err := importer.Open(b.Name(), importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	defer f.Close()
	return pi.ReadAs(ctx, Tool, b.Name(), f)
}
