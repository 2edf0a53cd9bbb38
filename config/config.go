// Package config reads loom's configuration: config.toml, profiles, and
// the environment variables that override them.
package config

import (
	"errors"
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
