package mcp

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom/recall"
)

// MaxRecallTokens bounds the recall tool's tokens argument.
const MaxRecallTokens = 8000

func (t *tools) recall() tool {
	return tool{
		tool: &sdk.Tool{
			Name:        "recall",
			Title:       "Recall what past sessions say",
			Description: `What the user's past sessions in this project say about a prompt: the most relevant turns (prompts, replies, tool calls), best first, each with its session id and date, within a budget of tokens. Call it before answering a question about work done before ("did we fix…", "how does our…", "why did we choose…"); read a session whole with read_session. With no prompt, the project's latest sessions by title.`,
			InputSchema: json.RawMessage(`{"type": "object", "properties": {
		"prompt": {"type": "string", "description": "What to recall about: the user's question or task, in their words."},
		"tokens": {"type": "integer", "minimum": 1, "maximum": 8000, "default": 1500, "description": "Most tokens to return."},
		` + projectArgs + `
	}}`),
			Annotations: readOnly("Recall what past sessions say"),
		},
		run: t.runRecall,
	}
}

type recallArgs struct {
	Prompt      string `json:"prompt"`
	Tokens      *int   `json:"tokens"`
	Project     string `json:"project"`
	AllProjects bool   `json:"all_projects"`
}

func (t *tools) runRecall(ctx context.Context, c *call) (*result, error) {
	var a recallArgs
	if err := c.decode(&a, "prompt, tokens, project and all_projects"); err != nil {
		return nil, err
	}
	n, err := limit("tokens", a.Tokens, recall.DefaultTokens, MaxRecallTokens)
	if err != nil {
		return nil, err
	}
	project, err := t.scope(ctx, c, a.Project, a.AllProjects)
	if err != nil {
		return nil, err
	}
	o := recall.Options{Prompt: a.Prompt, UserID: c.user, Tokens: n}
	if project != nil {
		o.ProjectID = project.ID
	}
	res, err := recall.Recall(ctx, c.st, o)
	if err != nil {
		return nil, err
	}
	text := res.Text()
	switch {
	case text != "":
		// A partial recall's text says so in its last line
		// (recall.Result.Text), as the structured content does
		// ("partial": true).
	case res.Partial:
		text = "partial: the recall ran out of time before its search ranked any match (a busy machine, or words in very many messages). Call again, or use rarer words."
	case project != nil:
		text = "Nothing in this project's past sessions bears on this; set all_projects to look everywhere."
	default:
		text = "Nothing in past sessions bears on this."
	}
	res.Redacted = c.redacted()
	return &result{text: strings.TrimSpace(text), structured: res}, nil
}
