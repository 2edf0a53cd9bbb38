package mcp

import (
	"context"
	"encoding/json"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom/report"
)

func (t *tools) usage() tool {
	return tool{
		tool: &sdk.Tool{
			Name:        "usage",
			Title:       "Token usage and cost over time",
			Description: `What the user's AI agents used and cost — loom's own sessions and those imported from Claude Code, Codex CLI, Gemini CLI and opencode — per day, week (ISO, from Monday), month, or 5-hour billing block (with burn rate per hour and, for the active block, a projection to its end). Each period has input, output, cache-read and cache-write tokens, the models used and the cost in US dollars; breakdown splits it by model, agent or project. A model without a known price has its tokens counted and cost_usd null; unpriced_models names them. By default only the current project is counted; set all_projects to count everything. Use it to answer "what did this project cost this week" (by week, since 7d) or "how fast am I burning my 5-hour window" (by block).`,
			InputSchema: json.RawMessage(`{"type": "object", "properties": {
		"by": {"type": "string", "enum": ["day", "week", "month", "block", "session"], "default": "day", "description": "The period of each row; session makes one row per session (period is its id, title its title)."},
		"start_of_week": {"type": "string", "description": "First day of a week (by week): monday (the default, ISO weeks) … sunday."},
		"breakdown": {"type": "string", "enum": ["model", "agent", "project", "member"], "description": "Split each period by model, agent (loom's cli, claude-code, codex, gemini, opencode, …), project, or member (of a team's sessions, loom mcp --team, where it is the default)."},
		"since": {"type": "string", "description": "From this time on: a date (2026-11-01), an RFC 3339 time, or an age such as 7d."},
		"until": {"type": "string", "description": "Up to this time; a date means the end of that day."},
		"tz": {"type": "string", "description": "IANA time zone days are cut in, e.g. Europe/Berlin or UTC. Default: the server's local zone."},
		"agent": {"type": "string", "description": "Keep to sessions of one agent: cli (loom's own), claude-code, codex, gemini, opencode."},
		` + projectArgs + `
	}}`),
			Annotations: readOnly("Token usage and cost over time"),
		},
		run: t.runUsage,
	}
}

type usageArgs struct {
	report.Request
	Project     string `json:"project"`
	AllProjects bool   `json:"all_projects"`
}

func (t *tools) runUsage(ctx context.Context, c *call) (*result, error) {
	var a usageArgs
	if err := c.decode(&a, "by, breakdown, since, until, tz, agent, project and all_projects"); err != nil {
		return nil, err
	}
	o, err := a.Options(c.user, time.Local, t.cfg.Now())
	if err != nil {
		return nil, err
	}
	project, err := t.scope(ctx, c, a.Project, a.AllProjects)
	if err != nil {
		return nil, err
	}
	if project != nil {
		o.ProjectID = project.ID
	}
	o.Prices = t.cfg.Prices
	if c.gate == nil {
		// The roots sessions ran in label projects; through the gate
		// they are not read, as the edit index they come from is not.
		o.Roots = c.edits
	}
	if t.cfg.Team {
		o.Member = report.Members(ctx, c.st)
		if o.Breakdown == "" {
			o.Breakdown = report.ByMember
		}
	}
	rep, err := report.Build(ctx, c.st, o)
	if err != nil {
		return nil, err
	}
	text := rep.Text()
	if project != nil {
		text = "Project " + project.Name + " (all_projects counts every project).\n" + text
	}
	return &result{text: text, structured: rep}, nil
}
