package command

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/summarize"
)

// Summarizer is what writes the summaries of this command line's user's
// sessions in st, as config.toml's [summaries] sets it: its provider and
// model (else the chat's), its quiet time and exclusions, and the secret
// detector of [secrets]. It returns the configuration too, whose
// [summaries] enabled says whether summaries are written in the
// background. A provider must be configured (a key or a base URL):
// summaries never look for a local server. Without needProvider (a dry
// run) the summarizer has no provider, and none need be configured.
func Summarizer(ctx context.Context, inv *Invocation, st loom.Store, needProvider bool) (*summarize.Summarizer, *config.Config, error) {
	d, c, err := ConfigLoader(inv.Config).Secrets()
	if err != nil {
		return nil, nil, err
	}
	sc := c.Summaries
	name, model := sc.Provider, sc.Model
	if name == "" || name == c.Provider {
		name = c.Provider
		if model == "" {
			model = c.Model
		}
	}
	if name == "" {
		switch {
		case c.Configured("openai"):
			name = "openai"
		case c.Configured("anthropic"):
			name = "anthropic"
		}
	}
	dirs, err := inv.Dirs()
	if err != nil {
		return nil, nil, err
	}
	z := &summarize.Summarizer{Store: st, Detector: d, Quiet: sc.QuietAfter(), Exclude: sc.Exclude, Home: inv.Home(), UserID: inv.User(), Now: inv.TimeNow}
	if !needProvider {
		return z, c, nil
	}
	if name == "" || !c.Configured(name) {
		what := "no model provider is configured"
		if name != "" {
			what = "provider " + name + " is not configured"
		}
		return nil, c, loom.Errorf(loom.EINVALID, "%s to write summaries: set OPENAI_API_KEY (or OPENAI_BASE_URL) or ANTHROPIC_API_KEY, or [summaries] provider in %s", what, dirs.ConfigFile())
	}
	su, err := inv.AgentSetup()
	if err != nil {
		return nil, nil, err
	}
	if z.Provider, z.Model, err = su.Provider(ctx, c, name, model); err != nil {
		return nil, nil, err
	}
	return z, c, nil
}

// StartSummaries summarises the quiet sessions of st in the background
// while ctx lasts, a pass every summarize.Interval, where config.toml's
// [summaries] enabled is true: what loom serve and loom session import
// --watch do. It says so on stderr, or why it cannot; what each pass
// does goes to log. A pass takes one session at a time and never holds
// up the command's own work.
func StartSummaries(ctx context.Context, inv *Invocation, st loom.Store, log *slog.Logger) {
	z, c, err := Summarizer(ctx, inv, st, true)
	if c == nil || !c.Summaries.Enabled {
		return
	}
	if err != nil {
		fmt.Fprintf(inv.IO.ErrOut, "loom: warning: [summaries] is enabled, but %s\n", term.SanitizeLine(loom.ErrorMessage(err)))
		return
	}
	fmt.Fprintf(inv.IO.ErrOut, "Summarising sessions quiet for %s in the background with %s.\n", c.Summaries.QuietAfter(), term.SanitizeLine(z.Model))
	go z.Watch(ctx, summarize.Interval, summarize.DefaultLimit, log)
}
