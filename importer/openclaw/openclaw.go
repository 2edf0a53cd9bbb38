// Package openclaw reads the sessions of OpenClaw (the openclaw
// command; Clawdbot and Moltbot before it was renamed), a gateway that
// runs the Pi agent for chats on many channels, for loom's importer.
//
// OpenClaw keeps its state in ~/.openclaw ($OPENCLAW_STATE_DIR), and
// Clawdbot and Moltbot kept theirs in ~/.clawdbot and ~/.moltbot, and
// KimiClaw (the OpenClaw that Kimi's desktop app runs) keeps its in
// ~/.kimi_openclaw: each
// agent's sessions are agents/<agent id>/sessions/<session id>.jsonl,
// in pi's session format (package pi reads them: header, entry tree,
// messages, tool calls and results, compactions, branches as forks).
// A transcript OpenClaw set aside when a session was reset or deleted
// (<id>.jsonl.reset.<time>, <id>.jsonl.deleted.<time>) is read too: it
// is the user's history. sessions.json, the index of which chat maps to
// which session, is not read.
//
// Since 2026 OpenClaw keeps its sessions in a database of each agent's,
// agents/<agent id>/agent/openclaw-agent.sqlite, and writes no
// transcript files: each row of session_windows is a session, and its
// rows of transcript_events, in order of seq, are the lines of a
// session file in pi's format (each event's JSON, or the same
// compressed with zstd), which pi's reader reads as it reads a file. A
// window whose parent_session_key names another window's key is a
// sub-agent of that window's session; its display_name is the title.
// The database is opened read-only, as the other databases loom reads
// (importer.OpenSQLite). Learnt from OpenClaw's documentation
// (docs/openclaw-agent-runtime.md) and the database OpenClaw 2026.9.6
// writes (`openclaw agent --local`, run in loom's tests).
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
// or ~/.openclaw), of Clawdbot's and Moltbot's before it, and of
// KimiClaw's, the Kimi desktop app's OpenClaw, whose state is
// ~/.kimi_openclaw.
func (Format) Roots(env func(string) string, home string) []string {
	var roots []string
	if d := importer.ToolDir(env, home, EnvState, ".openclaw"); d != "" {
		roots = append(roots, filepath.Join(d, "agents"))
	}
	if home != "" {
		roots = append(roots, filepath.Join(home, ".clawdbot", "agents"), filepath.Join(home, ".moltbot", "agents"),
			filepath.Join(home, ".kimi_openclaw", "agents"))
	}
	return roots
}

// Bundles lists each transcript under root: <id>.jsonl, and those set
// aside on a reset or deletion, one bundle each; and each agent's
// database (with its write-ahead log), one bundle each.
func (Format) Bundles(ctx context.Context, root string) ([]importer.Bundle, error) {
	bs, err := importer.FileBundles(ctx, Tool, root, func(_ string, d fs.DirEntry) bool {
		return isTranscript(d.Name()) || d.Name() == dbName
	})
	for i, b := range bs {
		if filepath.Base(b.Name()) == dbName {
			bs[i] = importer.SQLiteBundle(b.Name())
		}
	}
	return bs, err
}

// isTranscript reports whether name is a session's transcript.
func isTranscript(name string) bool {
	base, rest, ok := strings.Cut(name, ".jsonl")
	if !ok || base == "" {
		return false
	}
	return rest == "" || strings.HasPrefix(rest, ".reset.") || strings.HasPrefix(rest, ".deleted.")
}

// Read reads one transcript with pi's reader, or every session of an
// agent's database.
func (Format) Read(ctx context.Context, b importer.Bundle) (*importer.Result, error) {
	if filepath.Base(b.Name()) == dbName {
		return readDB(ctx, b)
	}
	f, _, err := importer.Open(b.Name(), importer.MaxFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Tool, err)
	}
	defer f.Close()
	return pi.ReadAs(ctx, Tool, b.Name(), f)
}
