// Package config reads loom's configuration: config.toml, profiles, and
// the environment variables that override them.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/pricing"
	"github.com/loomhq/loom/secrets"
)

// Config is config.toml. Every field is optional.
type Config struct {
	// Provider is "openai" (any OpenAI-compatible server) or "anthropic".
	Provider string `toml:"provider"`
	Model    string `toml:"model"`
	// Profile names the profile used by new sessions.
	Profile string `toml:"profile"`
	// Thinking asks models for reasoning when they support it.
	Thinking  bool `toml:"thinking"`
	MaxTokens int  `toml:"max_tokens"`
	// ContextWindow is the model's context size in tokens, when known;
	// compaction starts at 80% of it.
	ContextWindow int `toml:"context_window"`
	// CompactAfter is the number of non-user items since the last summary
	// past which the context is compacted (default 40).
	CompactAfter int `toml:"compact_after"`
	// StreamIdleTimeout stops a turn whose model stream sends nothing
	// for this long, and TurnTimeout one that runs longer than this;
	// zero means the agent's defaults (60s and 10m).
	StreamIdleTimeout time.Duration `toml:"stream_idle_timeout"`
	TurnTimeout       time.Duration `toml:"turn_timeout"`

	OpenAI    Endpoint `toml:"openai"`
	Anthropic Endpoint `toml:"anthropic"`

	// MCPServers are MCP servers whose tools the agent offers the model
	// next to its own, by name ([mcp_servers.NAME]).
	MCPServers map[string]MCPServer `toml:"mcp_servers"`

	// MCP sets what `loom mcp` offers ([mcp]).
	MCP MCPSettings `toml:"mcp"`

	// Secrets sets how secrets are found and when they are redacted
	// ([secrets]).
	Secrets SecretsSettings `toml:"secrets"`

	// Sync is where `loom sync` keeps this machine's sessions in step
	// with the user's other machines ([sync]).
	Sync SyncSettings `toml:"sync"`

	// Share is the hub `loom share` publishes share links through
	// ([share]); unset, it is [sync]'s.
	Share ShareSettings `toml:"share"`

	// Embeddings is the OpenAI-compatible /v1/embeddings endpoint that
	// ranks search by meaning ([embeddings]).
	Embeddings EmbeddingsSettings `toml:"embeddings"`

	// Summaries writes a short summary of each session once it goes
	// quiet, where the user turns it on ([summaries]).
	Summaries SummariesSettings `toml:"summaries"`

	// Recall sets how the agents' recall hooks answer ([recall]).
	Recall RecallSettings `toml:"recall"`

	// Prices add models to the price table or override its prices,
	// by "provider/model" or by "model" under any provider
	// ([prices."anthropic/claude-sonnet-4-5"]).
	Prices map[string]Price `toml:"prices"`
}

// Price is the price of one model in US dollars per million tokens;
// the long_ ones, when any is set, are those of a request whose prompt
// is above pricing.LongContextTokens.
type Price struct {
	Input  float64 `toml:"input"`
	Output float64 `toml:"output"`
	// CacheRead and CacheWrite, unset, are the input price: what a
	// provider that does not price them apart bills (a price list does
	// the same); 0 makes them free.
	CacheRead  *float64 `toml:"cache_read"`
	CacheWrite *float64 `toml:"cache_write"`
	// CacheWrite1h is a write to a cache kept for an hour; unset, it
	// costs CacheWrite.
	CacheWrite1h float64 `toml:"cache_write_1h"`
	LongInput    float64 `toml:"long_input"`
	LongOutput   float64 `toml:"long_output"`
	// LongCacheRead and LongCacheWrite, unset, are the long input
	// price.
	LongCacheRead    *float64 `toml:"long_cache_read"`
	LongCacheWrite   *float64 `toml:"long_cache_write"`
	LongCacheWrite1h float64  `toml:"long_cache_write_1h"`
}

// orPrice is *p, or else when p is unset.
func orPrice(p *float64, or float64) float64 {
	if p == nil {
		return or
	}
	return *p
}

// PriceTable is the bundled price table with c's prices in front.
func (c *Config) PriceTable() *pricing.Table {
	t := &pricing.Table{}
	names := make([]string, 0, len(c.Prices))
	for name := range c.Prices {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := c.Prices[name]
		price := pricing.Price{Input: p.Input, Output: p.Output, CacheRead: orPrice(p.CacheRead, p.Input),
			CacheWrite: orPrice(p.CacheWrite, p.Input), CacheWrite1h: p.CacheWrite1h}
		if p.LongInput != 0 || p.LongOutput != 0 || p.LongCacheRead != nil || p.LongCacheWrite != nil || p.LongCacheWrite1h != 0 {
			price.LongContext = &pricing.Price{Input: p.LongInput, Output: p.LongOutput, CacheRead: orPrice(p.LongCacheRead, p.LongInput),
				CacheWrite: orPrice(p.LongCacheWrite, p.LongInput), CacheWrite1h: p.LongCacheWrite1h}
		}
		provider, model, ok := strings.Cut(name, "/")
		if !ok {
			provider, model = "", name
		}
		t.Add(provider, model, price)
	}
	return t
}

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

// duration is a setting that is a Go duration: where it goes, its key
// in config.toml and the environment variable that overrides it.
type duration struct {
	dst      *time.Duration
	key, env string
}

func (c *Config) durations() []duration {
	return []duration{
		{&c.StreamIdleTimeout, "stream_idle_timeout", "LOOM_STREAM_IDLE_TIMEOUT"},
		{&c.TurnTimeout, "turn_timeout", "LOOM_TURN_TIMEOUT"},
		{&c.Sync.Interval, "sync.interval", "LOOM_SYNC_INTERVAL"},
		{&c.Summaries.Quiet, "summaries.quiet", "LOOM_SUMMARIES_QUIET"},
		{&c.Recall.HookTime, "recall.hook_time", "LOOM_RECALL_HOOK_TIME"},
	}
}

// Endpoint is how to reach one provider.
type Endpoint struct {
	APIKey  string `toml:"api_key"`
	BaseURL string `toml:"base_url"`
}

// Load reads config.toml at path; a missing file is an empty
// configuration. Environment variables then override it: LOOM_PROVIDER,
// LOOM_MODEL, OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY,
// ANTHROPIC_BASE_URL, LOOM_STREAM_IDLE_TIMEOUT, LOOM_TURN_TIMEOUT,
// LOOM_SYNC_HUB, LOOM_SYNC_TOKEN, LOOM_SYNC_INTERVAL, LOOM_EMBEDDINGS_URL,
// LOOM_EMBEDDINGS_MODEL, LOOM_SUMMARIES_QUIET, LOOM_RECALL_HOOK_TIME,
// LOOM_RECALL_WARM, LOOM_REDACT_ON_WRITE.
func Load(path string, env func(string) string) (*Config, error) {
	c := &Config{}
	if path != "" {
		md, err := toml.DecodeFile(path, c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, loom.Errorf(loom.EINVALID, "read %s: %v", path, err)
		default:
			if und := md.Undecoded(); len(und) > 0 {
				return nil, loom.Errorf(loom.EINVALID, "%s: unknown setting %q", path, und[0].String())
			}
			for _, d := range c.durations() {
				// A bare number would be read as nanoseconds.
				if key := strings.Split(d.key, "."); md.IsDefined(key...) && md.Type(key...) != "String" {
					return nil, loom.Errorf(loom.EINVALID, "%s: %s must be a duration in quotes, such as \"60s\" or \"5m\"", path, d.key)
				}
			}
		}
	}
	if env == nil {
		env = os.Getenv
	}
	set := func(dst *string, name string) {
		if v := env(name); v != "" {
			*dst = v
		}
	}
	set(&c.Sync.Hub, "LOOM_SYNC_HUB")
	set(&c.Sync.Token, "LOOM_SYNC_TOKEN")
	set(&c.Share.Hub, "LOOM_SHARE_HUB")
	set(&c.Share.Token, "LOOM_SHARE_TOKEN")
	set(&c.Embeddings.URL, "LOOM_EMBEDDINGS_URL")
	set(&c.Embeddings.Model, "LOOM_EMBEDDINGS_MODEL")
	set(&c.Provider, "LOOM_PROVIDER")
	set(&c.Model, "LOOM_MODEL")
	set(&c.OpenAI.APIKey, "OPENAI_API_KEY")
	set(&c.OpenAI.BaseURL, "OPENAI_BASE_URL")
	set(&c.Anthropic.APIKey, "ANTHROPIC_API_KEY")
	set(&c.Anthropic.BaseURL, "ANTHROPIC_BASE_URL")
	if on, ok, err := envBool(env, "LOOM_RECALL_WARM"); err != nil {
		return nil, err
	} else if ok {
		c.Recall.Warm = &on
	}
	if on, ok, err := envBool(env, "LOOM_REDACT_ON_WRITE"); err != nil {
		return nil, err
	} else if ok {
		c.Secrets.RedactOnWrite = on
	}
	if err := c.checkMCP(path); err != nil {
		return nil, err
	}
	if path != "" {
		ids, err := secrets.ReadAllowFile(AllowFile(filepath.Dir(path)))
		if err != nil {
			return nil, err
		}
		c.Secrets.AllowIDs = ids
	}
	for _, d := range c.durations() {
		if v := strings.TrimSpace(env(d.env)); v != "" {
			parsed, err := time.ParseDuration(v)
			if err != nil {
				return nil, loom.Errorf(loom.EINVALID, "%s=%q is not a duration: use one such as 60s or 5m", d.env, v)
			}
			*d.dst = parsed
		}
		if *d.dst < 0 {
			return nil, loom.Errorf(loom.EINVALID, "%s is %s: a time limit cannot be negative", d.key, *d.dst)
		}
	}
	for name, p := range c.Prices {
		for _, v := range []float64{p.Input, p.Output, orPrice(p.CacheRead, 0), orPrice(p.CacheWrite, 0), p.CacheWrite1h, p.LongInput, p.LongOutput,
			orPrice(p.LongCacheRead, 0), orPrice(p.LongCacheWrite, 0), p.LongCacheWrite1h} {
			if v < 0 {
				return nil, loom.Errorf(loom.EINVALID, "%s: prices.%q: a price cannot be negative", path, name)
			}
		}
	}
	for _, p := range []*string{&c.Provider, &c.Summaries.Provider} {
		*p = strings.ToLower(strings.TrimSpace(*p))
		switch *p {
		case "", "openai", "anthropic":
		default:
			return nil, loom.Errorf(loom.EINVALID, "unknown provider %q: use \"openai\" (any OpenAI-compatible server) or \"anthropic\"", *p)
		}
	}
	return c, nil
}

// AllowFile is the allow-list `loom secrets allow` keeps in the
// configuration directory dir: the ids of values never to report.
func AllowFile(dir string) string { return filepath.Join(dir, "secrets-allow.txt") }

// Configured reports whether provider p has an API key or a base URL.
func (c *Config) Configured(p string) bool {
	switch p {
	case "openai":
		return c.OpenAI.APIKey != "" || c.OpenAI.BaseURL != ""
	case "anthropic":
		return c.Anthropic.APIKey != "" || c.Anthropic.BaseURL != ""
	}
	return false
}

// Profile is a named system prompt with an optional model.
type Profile struct {
	Name   string
	Prompt string `toml:"prompt"`
	Model  string `toml:"model"`
}

// LoadProfile reads profile name from dir: NAME.toml (prompt and model) or
// NAME.md (the prompt alone). "default" without a file is the empty
// profile.
func LoadProfile(dir, name string) (*Profile, error) {
	if name == "" {
		name = "default"
	}
	if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return nil, loom.Errorf(loom.EINVALID, "invalid profile name %q", name)
	}
	p := &Profile{Name: name}
	if _, err := toml.DecodeFile(filepath.Join(dir, name+".toml"), p); err == nil {
		p.Name = name
		return p, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, loom.Errorf(loom.EINVALID, "profile %s: %v", name, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, name+".md"))
	if err == nil {
		p.Prompt = string(b)
		return p, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("profile %s: %w", name, err)
	}
	if name == "default" {
		return p, nil
	}
	avail := Profiles(dir)
	return nil, loom.Errorf(loom.ENOTFOUND, "no profile %q in %s (have: %s)", name, dir, strings.Join(append([]string{"default"}, avail...), ", "))
}

// Profiles lists the profile names found in dir.
func Profiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	seen := map[string]bool{}
	var names []string
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".toml" && ext != ".md") {
			continue
		}
		n := strings.TrimSuffix(e.Name(), ext)
		if !seen[n] && n != "default" {
			seen[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// checkMCP checks each [mcp_servers.NAME]: a usable name, one way to
// reach it, and a valid startup timeout.
func (c *Config) checkMCP(path string) error {
	for name, m := range c.MCPServers {
		if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			return loom.Errorf(loom.EINVALID, "%s: mcp_servers.%s: a server's name may hold only letters, digits, - and _", path, name)
		}
		switch {
		case m.Command == "" && m.URL == "":
			return loom.Errorf(loom.EINVALID, "%s: mcp_servers.%s needs command (a program that speaks MCP on stdin/stdout) or url", path, name)
		case m.Command != "" && m.URL != "":
			return loom.Errorf(loom.EINVALID, "%s: mcp_servers.%s has both command and url; give one", path, name)
		}
		if m.StartupTimeout != "" {
			if d, err := time.ParseDuration(m.StartupTimeout); err != nil || d <= 0 {
				return loom.Errorf(loom.EINVALID, "%s: mcp_servers.%s: startup_timeout %q is not a duration such as 10s", path, name, m.StartupTimeout)
			}
		}
	}
	return nil
}

// envBool reads the boolean environment variable name: ok is false when
// it is not set, and a value that is not a boolean is an error naming it.
func envBool(env func(string) string, name string) (on, ok bool, err error) {
	v := strings.TrimSpace(env(name))
	if v == "" {
		return false, false, nil
	}
	on, err = strconv.ParseBool(v)
	if err != nil {
		return false, false, loom.Errorf(loom.EINVALID, "%s=%q: use true or false", name, v)
	}
	return on, true, nil
}
