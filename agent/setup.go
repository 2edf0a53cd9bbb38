package agent

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent/mcpclient"
	"github.com/loomhq/loom/anthropic"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/openai"
	"github.com/loomhq/loom/paths"
	"github.com/loomhq/loom/replaylog"
)

// Default models when a provider is configured without one.
const (
	DefaultOpenAIModel    = "gpt-4o-mini"
	DefaultAnthropicModel = "claude-sonnet-4-5"
	// DefaultLocalURL is where a local OpenAI-compatible server usually
	// listens (Ollama).
	DefaultLocalURL = openai.DefaultLocalURL
)

// ProviderFunc makes a provider from its endpoint; the program supplies
// one per provider name ("openai", "anthropic").
type ProviderFunc func(e config.Endpoint) loom.Provider

// Choice is what a caller asked for of the agent; empty fields are "not
// given" and fall back to the session's, then the configuration's.
type Choice struct {
	Model   string
	Profile string
}

// Setup builds the agent of a session from loom's configuration: the
// provider and model, the profile, the memory files and the replay log.
// The configuration file is read at each Build, so a running server sees
// a changed one.
type Setup struct {
	// Dirs are loom's directories: configuration, profiles, memory files
	// and replay logs.
	Dirs paths.Dirs
	// Env looks up environment variables.
	Env func(string) string
	// LoadConfig reads loom's configuration (config.toml with the
	// environment's overrides); Build calls it each time, so a running
	// server sees a changed file. The program passes the loader its
	// commands use, so that all of them read the configuration the same
	// way (nil: an empty configuration).
	LoadConfig func() (*config.Config, error)
	// Providers makes model providers by name.
	Providers map[string]ProviderFunc
	// LocalModelURL is where to look for a local OpenAI-compatible server
	// when no provider is configured (default DefaultLocalURL, or
	// OLLAMA_HOST).
	LocalModelURL string
	// Served is set for an agent that answers over the network: it gets
	// no read_file (that would read this machine's files for anyone with
	// a token), and the memory tool and memory files only in sessions of
	// Operator, the user who runs the server.
	Served   bool
	Operator string
	// OnLogError is told when a replay log cannot be written (the session
	// is still stored).
	OnLogError func(error)
	// MCP connects to the MCP servers config.toml names, whose tools
	// the model is offered next to the built-in ones (nil: none). A
	// served agent never gets them: they act on this machine.
	MCP *mcpclient.Clients
	// OnMCPError is told, once per server, that one could not be
	// reached; the agent goes on without its tools.
	OnMCPError func(error)
}

// ErrNoProvider is in the chain of the error said when no model provider
// can be found; its message is a short list of ways to configure one, a
// line each, to copy and paste.
var ErrNoProvider = errors.New("no model provider is configured")

// noProviderError is ErrNoProvider, coded EINVALID.
type noProviderError struct{ coded *loom.Error }

func (e *noProviderError) Error() string   { return e.coded.Message }
func (e *noProviderError) Unwrap() []error { return []error{e.coded, ErrNoProvider} }

// noProviderHelp says how to configure a provider.
func noProviderHelp(configFile string) error {
	return &noProviderError{loom.Errorf(loom.EINVALID, `no model provider is configured; set one up and run loom again:
  export OPENAI_API_KEY=sk-...         # OpenAI
  export ANTHROPIC_API_KEY=sk-ant-...  # Anthropic
  ollama pull llama3.2                 # Ollama, found at 127.0.0.1:11434
For another OpenAI-compatible server (vLLM, llama.cpp, OpenRouter,
LM Studio) set OPENAI_BASE_URL too; LOOM_MODEL chooses the model, and
%s can hold provider, model and api_key.`, configFile)}
}

func (su *Setup) env(k string) string {
	if su.Env == nil {
		return ""
	}
	return su.Env(k)
}

func (su *Setup) config() (*config.Config, error) {
	if su.LoadConfig == nil {
		return &config.Config{}, nil
	}
	return su.LoadConfig()
}

// Build returns the agent for session s: provider and model from c, else
// the session's (a resumed session keeps its own), else the
// configuration's; the profile likewise. It records the choice on s, so
// the session is created (or updated) with it.
func (su *Setup) Build(ctx context.Context, st loom.Store, s *loom.Session, c Choice) (*Loop, error) {
	cfg, err := su.config()
	if err != nil {
		return nil, err
	}
	d := su.Dirs
	profileName := first(c.Profile, s.Profile, cfg.Profile)
	profile, err := config.LoadProfile(d.ProfilesDir(), profileName)
	if err != nil {
		return nil, err
	}
	provName := first(s.Provider, cfg.Provider)
	sessionModel := s.Model
	if s.Provider != "" && !cfg.Configured(s.Provider) && cfg.Configured(first(cfg.Provider, otherProvider(s.Provider))) {
		// The session's provider is no longer set up but another is:
		// continue there, with that provider's model.
		provName, sessionModel = first(cfg.Provider, otherProvider(s.Provider)), ""
	}
	model := first(c.Model, sessionModel, profile.Model, cfg.Model)
	if c.Model == "" && c.Profile != "" && profile.Model != "" {
		model = profile.Model // switching profile brings its model
	}
	prov, model, err := su.provider(ctx, cfg, provName, model)
	if err != nil {
		return nil, err
	}
	l := NewLoop(st, prov, model)
	l.Profile, l.System = profile.Name, profile.Prompt
	l.MemoryFile, l.UserFile = d.MemoryFile(), d.UserFile()
	l.Thinking, l.MaxTokens = cfg.Thinking, cfg.MaxTokens
	l.CompactItems, l.ContextWindow = cfg.CompactAfter, cfg.ContextWindow
	l.StreamIdleTimeout, l.TurnTimeout = cfg.StreamIdleTimeout, cfg.TurnTimeout
	if cfg.MCP.Redacts() {
		if l.Redact, err = cfg.Secrets.Detector(); err != nil {
			return nil, err
		}
	}
	l.LogFor = func(x *loom.Session) *replaylog.Log {
		lg, err := replaylog.Open(d.SessionLog(x.UserID, x.ID))
		if err != nil {
			if su.OnLogError != nil {
				su.OnLogError(err)
			}
			return nil
		}
		lg.OnError = su.OnLogError
		return lg
	}
	if su.MCP != nil && len(cfg.MCPServers) > 0 && !su.Served {
		remote, errs := su.MCP.Tools(ctx, cfg.MCPServers)
		for _, err := range errs {
			if su.OnMCPError != nil {
				su.OnMCPError(err)
			}
		}
		for _, rt := range remote {
			l.Tools = append(l.Tools, MCPTool{Remote: rt})
		}
	}
	if su.Served {
		su.restrict(l, s)
	}
	s.Model, s.Provider, s.Profile = model, prov.Name(), profile.Name
	if profile.Name == "default" && profileName == "" {
		s.Profile = ""
	}
	return l, nil
}

// restrict takes from a served agent what a network-facing agent must
// not have.
func (su *Setup) restrict(l *Loop, s *loom.Session) {
	own := s.UserID == su.Operator
	tools := l.Tools[:0:0]
	for _, t := range l.Tools {
		switch t.Spec().Name {
		case (ReadFile{}).Spec().Name:
			continue
		case (Memory{}).Spec().Name:
			if !own {
				continue
			}
		}
		tools = append(tools, t)
	}
	l.Tools = tools
	if !own {
		l.MemoryFile, l.UserFile = "", ""
	}
}

// Provider builds a provider from cfg as an agent gets it, for a call of
// its own (a session's summary): the named one when it is configured,
// else whichever is, else a local server that answers; model, or that
// provider's default, is the model to ask.
func (su *Setup) Provider(ctx context.Context, cfg *config.Config, name, model string) (loom.Provider, string, error) {
	return su.provider(ctx, cfg, name, model)
}

// provider picks and builds the provider: the named one when it is
// configured, else whichever is, else a local server that answers.
func (su *Setup) provider(ctx context.Context, cfg *config.Config, name, model string) (loom.Provider, string, error) {
	configFile := su.Dirs.ConfigFile()
	configured := cfg.Configured
	// OpenAI-compatible may still be a local server; Anthropic needs a key.
	if name == "anthropic" && !configured(name) {
		return nil, "", loom.Errorf(loom.EINVALID, "provider %s is not configured: set ANTHROPIC_API_KEY or [anthropic] api_key in %s", name, configFile)
	}
	if name == "" {
		switch {
		case configured("openai"):
			name = "openai"
		case configured("anthropic"):
			name = "anthropic"
		default:
			name = "openai"
		}
	}
	build := su.Providers[name]
	if build == nil {
		return nil, "", loom.Errorf(loom.EINVALID, "provider %s is not built into this loom", name)
	}
	if name == "anthropic" {
		return su.placedAt(build(cfg.Anthropic), cfg.Anthropic, anthropic.DefaultBaseURL, "ANTHROPIC_BASE_URL", "anthropic"), first(model, DefaultAnthropicModel), nil
	}
	if configured("openai") {
		if model == "" && cfg.OpenAI.BaseURL != "" && !strings.Contains(cfg.OpenAI.BaseURL, "api.openai.com") {
			// Another OpenAI-compatible server (vLLM, llama.cpp, LM
			// Studio, a gateway) seldom has OpenAI's default model: ask
			// it which it has, as for a local server.
			if models, ok := openai.Models(ctx, cfg.OpenAI.BaseURL, cfg.OpenAI.APIKey); ok && len(models) > 0 && !slices.Contains(models, DefaultOpenAIModel) {
				model = models[0]
			}
		}
		return su.placedAt(build(cfg.OpenAI), cfg.OpenAI, openai.DefaultBaseURL, "OPENAI_BASE_URL", "openai"), first(model, DefaultOpenAIModel), nil
	}
	// Nothing configured: use a local OpenAI-compatible server if one
	// answers at its usual address.
	local := openai.LocalURL(su.LocalModelURL, su.env)
	models, ok := openai.Models(ctx, local, "")
	if !ok {
		return nil, "", noProviderHelp(configFile)
	}
	if model == "" {
		if len(models) == 0 {
			return nil, "", loom.Errorf(loom.EINVALID, "the local model server at %s has no models; pull one (ollama pull llama3.2) or set LOOM_MODEL", local)
		}
		model = models[0]
	}
	return placed{Provider: build(config.Endpoint{BaseURL: local, APIKey: "local"}), addr: local, from: su.localFrom()}, model, nil
}

// otherProvider is the provider that is not p.
func otherProvider(p string) string {
	if p == "anthropic" {
		return "openai"
	}
	return "anthropic"
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
