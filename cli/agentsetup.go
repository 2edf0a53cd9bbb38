package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/replaylog"
)

// Default models when a provider is configured without one.
const (
	defaultOpenAIModel    = "gpt-4o-mini"
	defaultAnthropicModel = "claude-sonnet-4-5"
	// defaultLocalURL is where a local OpenAI-compatible server usually
	// listens (Ollama).
	defaultLocalURL = "http://127.0.0.1:11434/v1"
)

// ProviderFunc makes a provider from its endpoint; main supplies one per
// provider name ("openai", "anthropic").
type ProviderFunc func(e config.Endpoint) loom.Provider

// agentFlags are the agent choices a command's flags made; empty means
// "not given".
type agentFlags struct {
	Model   string
	Profile string
}

// noProviderHelp is the one paragraph chat and run print when no model
// provider can be found.
func noProviderHelp(configFile string) error {
	return loom.Errorf(loom.EINVALID, "no model provider is configured. Set OPENAI_API_KEY (with OPENAI_BASE_URL for any other OpenAI-compatible server: vLLM, llama.cpp, OpenRouter, LM Studio) or ANTHROPIC_API_KEY; or write provider, model and api_key into %s; or start Ollama on 127.0.0.1:11434, which loom uses when nothing else is set. LOOM_PROVIDER and LOOM_MODEL choose the provider and model.", configFile)
}

// Config reads config.toml and the environment.
func (f *Factory) Config() (*config.Config, error) {
	d, err := f.Dirs()
	if err != nil {
		return nil, err
	}
	return config.Load(d.ConfigFile(), f.env)
}

// AgentLoop builds the agent for session s: provider and model from the
// flags, else the session (a resumed session keeps its own), else the
// configuration; the profile likewise. It records the choice on s so the
// session is created (or updated) with it.
func (f *Factory) AgentLoop(ctx context.Context, st loom.Store, s *loom.Session, fl agentFlags) (*agent.Loop, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	d, err := f.Dirs()
	if err != nil {
		return nil, err
	}
	profileName := first(fl.Profile, s.Profile, cfg.Profile)
	profile, err := config.LoadProfile(d.ProfilesDir(), profileName)
	if err != nil {
		return nil, err
	}
	provName := first(s.Provider, cfg.Provider)
	sessionModel := s.Model
	if s.Provider != "" && !cfg.Configured(s.Provider) && cfg.Configured(first(cfg.Provider, other(s.Provider))) {
		// The session's provider is no longer set up but another is:
		// continue there, with that provider's model.
		provName, sessionModel = first(cfg.Provider, other(s.Provider)), ""
	}
	model := first(fl.Model, sessionModel, profile.Model, cfg.Model)
	if fl.Model == "" && fl.Profile != "" && profile.Model != "" {
		model = profile.Model // switching profile brings its model
	}
	prov, model, err := f.provider(ctx, cfg, provName, model, d.ConfigFile())
	if err != nil {
		return nil, err
	}
	l := agent.NewLoop(st, prov, model)
	l.Profile, l.System = profile.Name, profile.Prompt
	l.MemoryFile, l.UserFile = d.MemoryFile(), d.UserFile()
	l.Thinking, l.MaxTokens = cfg.Thinking, cfg.MaxTokens
	l.CompactItems, l.ContextWindow = cfg.CompactAfter, cfg.ContextWindow
	user := f.User()
	l.LogFor = func(x *loom.Session) *replaylog.Log {
		lg, err := replaylog.Open(d.SessionLog(user, x.ID))
		if err != nil {
			f.warnReplayLog(err)
			return nil
		}
		lg.OnError = f.warnReplayLog
		return lg
	}
	s.Model, s.Provider, s.Profile = model, prov.Name(), profile.Name
	if profile.Name == "default" && profileName == "" {
		s.Profile = ""
	}
	return l, nil
}

// provider picks and builds the provider: the named one when it is
// configured, else whichever is, else a local server that answers.
func (f *Factory) provider(ctx context.Context, cfg *config.Config, name, model, configFile string) (loom.Provider, string, error) {
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
	build := f.Providers[name]
	if build == nil {
		return nil, "", loom.Errorf(loom.EINVALID, "provider %s is not built into this loom", name)
	}
	switch name {
	case "anthropic":
		return build(cfg.Anthropic), first(model, defaultAnthropicModel), nil
	}
	if configured("openai") {
		return build(cfg.OpenAI), first(model, defaultOpenAIModel), nil
	}
	// Nothing configured: use a local OpenAI-compatible server if one
	// answers at its usual address.
	local := first(f.LocalModelURL, defaultLocalURL)
	if h := f.env("OLLAMA_HOST"); h != "" {
		// Ollama's own setting: host:port or a URL.
		if !strings.Contains(h, "://") {
			h = "http://" + h
		}
		local = strings.TrimSuffix(h, "/") + "/v1"
	}
	models, ok := probeLocal(ctx, local)
	if !ok {
		return nil, "", noProviderHelp(configFile)
	}
	if model == "" {
		if len(models) == 0 {
			return nil, "", loom.Errorf(loom.EINVALID, "the local model server at %s has no models; pull one (ollama pull llama3.2) or set LOOM_MODEL", local)
		}
		model = models[0]
	}
	return build(config.Endpoint{BaseURL: local, APIKey: "local"}), model, nil
}

// probeLocal asks a local OpenAI-compatible server for its models.
func probeLocal(ctx context.Context, baseURL string) ([]string, bool) {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(baseURL, "/")+"/models", nil)
	if err != nil {
		return nil, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, false
	}
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, true
	}
	var ids []string
	for _, m := range body.Data {
		ids = append(ids, m.ID)
	}
	return ids, true
}

// other is the provider that is not p.
func other(p string) string {
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

// warnReplayLog tells the user, once per process, that the replay log
// cannot be written. The session is still stored; only the log (for
// tail -f and loom log stream) is missing.
func (f *Factory) warnReplayLog(err error) {
	f.replayLogWarned.Do(func() {
		fmt.Fprintf(f.IO.ErrOut, "loom: warning: %s; the session is stored, but its replay log is not kept\n", oneLine(err.Error()))
	})
}
