package config

import (
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
)

// SyncSettings are the [sync] settings of `loom sync`.
type SyncSettings struct {
	// Hub is the URL of the hub, a `loom serve` every machine reaches
	// (LOOM_SYNC_HUB).
	Hub string `toml:"hub"`
	// Token is the user's token on the hub (LOOM_SYNC_TOKEN).
	Token string `toml:"token"`
	// Interval is how often `loom sync --watch` syncs (default 5s).
	Interval time.Duration `toml:"interval"`
}

// ShareSettings are the [share] settings of `loom share`.
type ShareSettings struct {
	// Hub is the URL of the hub that keeps share links, a `loom serve`
	// that the people the links are for reach (LOOM_SHARE_HUB; default
	// [sync] hub).
	Hub string `toml:"hub"`
	// Token is the user's token on that hub, full or share-only
	// (LOOM_SHARE_TOKEN; default [sync] token when the hub is [sync]'s).
	Token string `toml:"token"`
}

// EmbeddingsSettings are the [embeddings] settings: where loom gets the
// vectors that rank search by meaning (docs/search.md). With no URL, a
// local server at Ollama's address is used when it has Model.
type EmbeddingsSettings struct {
	// URL is the API root including /v1, e.g. http://127.0.0.1:11434/v1
	// (LOOM_EMBEDDINGS_URL).
	URL string `toml:"url"`
	// Model is the embedding model (LOOM_EMBEDDINGS_MODEL; default
	// nomic-embed-text).
	Model string `toml:"model"`
	// APIKeyEnv names the environment variable that holds the API key
	// (e.g. OPENAI_API_KEY); local servers need none.
	APIKeyEnv string `toml:"api_key_env"`
	// Enabled, when false, turns ranking by meaning off, local server
	// or not.
	Enabled *bool `toml:"enabled"`
}

// RecallSettings are [recall]: how loom recall answers an agent's hook.
type RecallSettings struct {
	// HookTime is how long a recall hook may take, from its process's
	// start to its answer (LOOM_RECALL_HOOK_TIME; default
	// DefaultRecallHookTime): it answers with what it found by then.
	HookTime time.Duration `toml:"hook_time"`
	// Warm, when false, keeps a hook that finds no warm recall from
	// starting one (loom recall serve) for the hooks after it
	// (LOOM_RECALL_WARM; default true).
	Warm *bool `toml:"warm"`
}

// WarmOn reports whether a hook starts a warm recall where none answers.
func (r RecallSettings) WarmOn() bool { return r.Warm == nil || *r.Warm }

// DefaultRecallHookTime is RecallSettings.HookTime when none is set.
const DefaultRecallHookTime = 100 * time.Millisecond

// SummariesSettings are the [summaries] settings: a summary of three
// short lines written, once, into the description of each session that
// has gone quiet (docs/search.md).
type SummariesSettings struct {
	// Enabled lets loom serve and loom session import --watch summarise
	// quiet sessions in the background (default false); loom session
	// summarize works either way.
	Enabled bool `toml:"enabled"`
	// Quiet is how long after its last message a session counts as
	// quiet (LOOM_SUMMARIES_QUIET; default DefaultSummariesQuiet).
	Quiet time.Duration `toml:"quiet"`
	// Provider and Model are the model that writes the summaries
	// (default: the chat's provider and model).
	Provider string `toml:"provider"`
	Model    string `toml:"model"`
	// Exclude keeps sessions out: those of a project with this name, or
	// whose project root or working directory is under this path (an
	// entry that starts with / or ~).
	Exclude []string `toml:"exclude"`
}

// DefaultSummariesQuiet is how long after its last message a session
// counts as quiet when [summaries] quiet is unset.
const DefaultSummariesQuiet = 30 * time.Minute

// QuietAfter is Quiet, or its default.
func (s SummariesSettings) QuietAfter() time.Duration {
	if s.Quiet <= 0 {
		return DefaultSummariesQuiet
	}
	return s.Quiet
}

// MCPSettings are the [mcp] settings of `loom mcp`.
type MCPSettings struct {
	// Handoff offers the handoff tool, which writes sessions of other
	// agents (Claude Code, Codex CLI, Gemini CLI) into their directories;
	// off by default, since it writes files.
	Handoff bool `toml:"handoff"`
	// Redact replaces secrets in what the read tools return (default
	// true); false gives them the text as stored.
	Redact *bool `toml:"redact"`
}

// Redacts reports whether the read tools of `loom mcp` redact secrets.
func (m MCPSettings) Redacts() bool { return m.Redact == nil || *m.Redact }

// SecretsSettings are the [secrets] settings: rules and allow-list of
// the detector (secrets.Config), and redaction as sessions are written.
type SecretsSettings struct {
	secrets.Config
	// RedactOnWrite replaces secrets in messages as they are stored:
	// imported from other agents or files, or written by loom's agent
	// (LOOM_REDACT_ON_WRITE).
	RedactOnWrite bool `toml:"redact_on_write"`
}

// Detector returns the secret detector these settings describe.
func (s SecretsSettings) Detector() (*secrets.Detector, error) {
	if len(s.Rules) == 0 && len(s.Allow) == 0 && len(s.Disable) == 0 && len(s.AllowIDs) == 0 {
		return secrets.Default(), nil
	}
	d, err := secrets.New(s.Config)
	if err != nil {
		return nil, loom.Errorf(loom.EINVALID, "config.toml [secrets]: %v", err)
	}
	return d, nil
}

// MCPServer is how to reach one MCP server: a command to start (it
// speaks MCP on its standard input and output) or the URL of a
// streamable HTTP endpoint.
type MCPServer struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	// Cwd is the command's working directory (default: loom's).
	Cwd string `toml:"cwd"`

	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// BearerTokenEnvVar names an environment variable whose value is
	// sent as Authorization: Bearer.
	BearerTokenEnvVar string `toml:"bearer_token_env_var"`

	// Enabled turns the server off when false (default true).
	Enabled *bool `toml:"enabled"`
	// Tools, when set, are the only tools of the server offered.
	Tools []string `toml:"tools"`
	// StartupTimeout bounds connecting and listing its tools, as a Go
	// duration (default 10s).
	StartupTimeout string `toml:"startup_timeout"`
}

// On reports whether the server is enabled.
func (m MCPServer) On() bool { return m.Enabled == nil || *m.Enabled }
