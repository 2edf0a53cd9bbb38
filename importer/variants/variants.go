// Package variants registers the agents whose sessions are files of
// another agent's format, each read by that agent's reader under its
// own name and in its own places (importer.Variant): forks of Claude
// Code (or keeping its files: Qoder, iFlow), Codex, Pi and OpenClaw,
// products built on CodeBuddy Code, an editor of VS Code's family,
// and Amazon Q Developer CLI renamed (Kiro CLI).
//
// Each layout was learnt from the agent's documentation where it has
// one and from agentsview's registry of agents (wesm/agentsview at
// a5de5daca0005d2794f6fe8e0412795cb2873e4b, internal/parser/types.go);
// the tests read files the base agent's real program wrote, laid out as
// each variant keeps them.
package variants

import (
	"path/filepath"

	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/amazonq"
	"github.com/loomhq/loom/importer/claudecode"
	"github.com/loomhq/loom/importer/codebuddy"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/copilotchat"
	"github.com/loomhq/loom/importer/openclaw"
	"github.com/loomhq/loom/importer/opencode"
	"github.com/loomhq/loom/importer/pi"
)

// The variants, by their names in loom.
var (
	// OpenClaude is the open fork of Claude Code (the openclaude
	// command), which keeps Claude Code's projects in ~/.openclaude.
	OpenClaude = importer.Variant{Of: claudecode.New(), Name: "openclaude",
		Env: "OPENCLAUDE_CONFIG_DIR", Sub: "projects", Dirs: [][]string{{".openclaude", "projects"}}}
	// ClaudeCowork is the Claude desktop app's Cowork (local agent mode),
	// which runs Claude Code and keeps its sessions in the app's data.
	ClaudeCowork = importer.Variant{Of: claudecode.New(), Name: "claude-cowork",
		Env: "LOOM_CLAUDE_COWORK_DIR", Dirs: [][]string{
			{".config", "Claude", "local-agent-mode-sessions"},
			{"Library", "Application Support", "Claude", "local-agent-mode-sessions"},
			{"AppData", "Roaming", "Claude", "local-agent-mode-sessions"},
			{"AppData", "Local", "Packages", "Claude_pzs8sxrjxfjjc", "LocalCache", "Roaming", "Claude", "local-agent-mode-sessions"},
		}}
	// Qoder is Qoder's CLI and editor, which keep Claude Code's project
	// tree of session files (the CLI in ~/.qoder/projects, or
	// $QODER_CONFIG_DIR/projects as qodercli 1.1.52's code has it; the
	// editor in its SharedClientCache).
	Qoder = importer.Variant{Of: claudecode.New(), Name: "qoder",
		Env: "QODER_CONFIG_DIR", Sub: "projects", Dirs: [][]string{
			{".qoder", "projects"}, {".qoder-cn", "projects"}, {".qoderwork", "projects"},
			{".config", "Qoder", "SharedClientCache", "cli", "projects"},
			{"Library", "Application Support", "Qoder", "SharedClientCache", "cli", "projects"},
			{"AppData", "Roaming", "Qoder", "SharedClientCache", "cli", "projects"},
		}}
	// IFlow is iFlow CLI, whose session files (session-<id>.jsonl in a
	// directory per project of ~/.iflow/projects) hold Claude Code's
	// lines (uuid, parentUuid, message).
	IFlow = importer.Variant{Of: claudecode.New(), Name: "iflow",
		Env: "LOOM_IFLOW_DIR", Dirs: [][]string{{".iflow", "projects"}}}
	// TraeX is TRAE CLI 2, a fork of Codex that writes Codex's rollouts
	// in ~/.trae/cli.
	TraeX = importer.Variant{Of: codex.Format{}, Name: "traex",
		Env: "LOOM_TRAEX_DIR", Dirs: [][]string{{".trae", "cli", "sessions"}, {".trae", "cli", "archived_sessions"}}}
	// PrimeAgent is Prime Agent, built on Pi, which keeps Pi's session
	// files in ~/.prime/agent.
	PrimeAgent = importer.Variant{Of: pi.Format{}, Name: "prime-agent",
		Env: "PRIME_AGENT_SESSION_DIR", Dirs: [][]string{{".prime", "agent", "sessions"}}}
	// QClaw is a build of OpenClaw that keeps OpenClaw's agents in
	// ~/.qclaw (under assets/static in the later layout).
	QClaw = importer.Variant{Of: openclaw.Format{}, Name: "qclaw",
		Env: "LOOM_QCLAW_DIR", Dirs: [][]string{{".qclaw", "agents"}, {".qclaw", "assets", "static", "agents"}}}
	// WorkBuddy is the desktop agent on CodeBuddy Code's core, which
	// keeps CodeBuddy's transcripts in ~/.workbuddy (the
	// codebuddy program reads $WORKBUDDY_CONFIG_DIR for it).
	WorkBuddy = importer.Variant{Of: codebuddy.Format{}, Name: "workbuddy",
		Env: "WORKBUDDY_CONFIG_DIR", Sub: "projects", Dirs: [][]string{{".workbuddy", "projects"}}}
	// Positron is Posit's data science editor, built from VS Code: its
	// Assistant keeps VS Code's chat sessions in Positron's user
	// directory.
	Positron = importer.Variant{Of: copilotchat.Format{}, Name: "positron",
		Places: func(env func(string) string, home string) []string {
			var out []string
			for _, u := range importer.VSCodeUserDirs(env, home, "Positron") {
				out = append(out, filepath.Join(u, "workspaceStorage"), filepath.Join(u, "globalStorage", "emptyWindowChatSessions"))
			}
			return out
		}}
)

// KiroCLI is kiro-cli, Amazon Q Developer CLI renamed: the same
// SQLite database, data.sqlite3, in its own data directory.
var KiroCLI = importer.Variant{Of: amazonq.Format{}, Name: "kiro-cli",
	Env: "LOOM_KIRO_CLI_DIR", Dirs: [][]string{
		{".local", "share", "kiro-cli"},
		{"Library", "Application Support", "kiro-cli"},
	}}

// MiMoCode is MiMo's coding agent, a fork of opencode that keeps
// its sessions in a database of opencode's schema,
// ~/.local/share/mimocode/mimocode.db.
var MiMoCode = opencode.Fork("mimocode", "mimocode", "mimocode.db", "build")

// NanoCode is NanoGPT's coding agent (npm's nanocode), a fork of
// opencode that keeps its sessions in a database of opencode's schema in
// ~/.local/share/nanocode, named for its release channel: 1.2.28, of
// channel dev, writes opencode-dev.db.
var NanoCode = opencode.Fork("nanocode", "nanocode", "opencode-dev.db", "build")

func init() {
	importer.Register(MiMoCode)
	importer.Register(NanoCode)
	for _, v := range []importer.Variant{OpenClaude, ClaudeCowork, TraeX, PrimeAgent, QClaw, WorkBuddy, Positron, Qoder, IFlow, KiroCLI} {
		importer.Register(v)
	}
}
