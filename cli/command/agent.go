package command

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/agent"
	"github.com/loomhq/loom/agent/mcpclient"
	"github.com/loomhq/loom/cli/term"
	"github.com/loomhq/loom/config"
)

// SessionChoice is how a command names the session to work in.
type SessionChoice struct {
	New      bool
	Continue bool
	Resume   string
	Key      string
	// Name is the title of the new session (--name).
	Name string
}

// Check refuses a malformed --key or --name as a usage error.
func (c SessionChoice) Check() error {
	if c.Name != "" {
		if err := loom.ValidTitle(c.Name); err != nil {
			return UsageErrorf("--name: %s", loom.ErrorMessage(err))
		}
		if c.Resume != "" || c.Continue {
			return UsageErrorf("--name titles a new session; to rename one, use loom session rename REF TITLE (or /rename in chat)")
		}
	}
	if c.Key == "" {
		return nil
	}
	if err := loom.ValidKey(c.Key); err != nil {
		return UsageErrorf("--key: %s", loom.ErrorMessage(err))
	}
	return nil
}

// AgentSetup is how this command line builds agents: its directories,
// environment and providers.
func (inv *Invocation) AgentSetup() (*agent.Setup, error) {
	d, err := inv.Dirs()
	if err != nil {
		return nil, err
	}
	if inv.mcp == nil {
		inv.mcp = &mcpclient.Clients{Version: inv.Version}
	}
	loadConfig := func() (*config.Config, error) {
		c, _, err := inv.Config()
		return c, err
	}
	return &agent.Setup{Dirs: d, Env: inv.Getenv, LoadConfig: loadConfig, Providers: inv.Providers, LocalModelURL: inv.LocalModelURL,
		OnLogError: inv.warnReplayLog, MCP: inv.mcp, OnMCPError: inv.warnMCP}, nil
}

// warnMCP tells the user that an MCP server of config.toml could not be
// reached (once per server: the clients do not try it again).
func (inv *Invocation) warnMCP(err error) {
	fmt.Fprintf(inv.IO.ErrOut, "loom: warning: %s; going on without its tools\n", term.SanitizeLine(err.Error()))
}

// conversations is the conversation service over st with this command
// line's agent setup.
func conversations(inv *Invocation, st loom.Store) (*agent.Service, error) {
	su, err := inv.AgentSetup()
	if err != nil {
		return nil, err
	}
	return &agent.Service{Store: st, Build: su.Build, Now: inv.TimeNow}, nil
}

// OpenConversation opens the conversation the flags name: a resumed
// reference is resolved here (with the command line's messages for
// trashed and ambiguous references), the rest by the service. current
// says whether no flag means this project's current session (chat) or a
// new one (run).
func OpenConversation(ctx context.Context, inv *Invocation, st loom.Store, c SessionChoice, ag agent.Choice, current bool) (*agent.Conversation, error) {
	svc, err := conversations(inv, st)
	if err != nil {
		return nil, err
	}
	project, err := inv.Project()
	if err != nil {
		return nil, err
	}
	cwd, _ := inv.Cwd()
	// A name is for a new session: without --key it starts one.
	fresh := c.New || (!current && !c.Continue) || (c.Name != "" && c.Key == "")
	spec := agent.Spec{UserID: inv.User(), Project: project, Cwd: cwd, Key: c.Key, New: fresh, Continue: c.Continue, Agent: ag}
	if c.Resume != "" {
		s, err := inv.Scope().Resolve(ctx, st, c.Resume)
		if err != nil {
			return nil, err
		}
		spec.Session, spec.Key, spec.New = s, "", false
	}
	if spec.Session == nil && spec.Key == "" && !spec.New {
		// The project's current session, or none: then perhaps the
		// project moved on disk, which the user should hear first.
		s, exists, err := svc.Choose(ctx, spec)
		if !exists && (err == nil || loom.ErrorCode(err) == loom.ENOTFOUND) {
			if herr := PrintMovedProjectHint(ctx, inv.IO, inv.User(), st, project); herr != nil {
				return nil, herr
			}
		}
		if err != nil {
			return nil, err
		}
		spec.Session = s
	}
	conv, err := svc.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	if c.Name != "" {
		if conv.Resumed() {
			conv.Close(ctx)
			return nil, UsageErrorf("--name titles a new session, and the session with key %s exists; rename it with loom session rename %s TITLE", c.Key, conv.Session().ID)
		}
		if err := conv.Rename(ctx, c.Name); err != nil {
			conv.Close(ctx)
			return nil, err
		}
	}
	if src := conv.ContinuesImported(); src != nil && !inv.JSON() {
		// The id of the fork follows: in the resume header, or run's
		// "session <id>".
		fmt.Fprintln(inv.IO.ErrOut, inv.IO.WrapErr(fmt.Sprintf("Continuing the %s session %q in a fork of it that your first message makes (the import stays as it was).",
			src.Surface, term.SanitizeLine(src.Title))))
	}
	return conv, nil
}

// warnReplayLog tells the user, once per run, that the replay log
// cannot be written. The session is still stored; only the log (for
// tail -f and loom log stream) is missing.
func (inv *Invocation) warnReplayLog(err error) {
	inv.replayLogWarned.Do(func() {
		fmt.Fprintf(inv.IO.ErrOut, "loom: warning: %s; the session is stored, but its replay log is not kept\n", term.SanitizeLine(err.Error()))
	})
}
