package grok

import (
	"context"
	"os"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// readUpdates reads the update stream at path: each finished turn's
// usage (every model call of the turn, its sub-agents' included) is
// that of the prompt it answered (a command's turn, such as /compact,
// has none), and each sub-agent finished during a prompt's turn.
func (r *read) readUpdates(ctx context.Context, path string, res *importer.Result) {
	f, _, err := importer.Open(path, importer.MaxFile)
	if err != nil {
		if !os.IsNotExist(err) {
			res.Problemf(path, 0, err.Error())
		}
		return
	}
	defer f.Close()
	r.usage, r.finished = map[int]loom.Usage{}, map[string]int{}
	turn := -1
	_ = importer.Lines(ctx, f, func(n int, line []byte) error {
		var u struct {
			Params struct {
				Update struct {
					Kind string `json:"sessionUpdate"`
					Meta struct {
						PromptIndex *int `json:"promptIndex"`
						HostTurn    bool `json:"hostTurn"`
					} `json:"_meta"`
					Child string `json:"child_session_id"`
					Usage *struct {
						Input     float64 `json:"inputTokens"`
						Output    float64 `json:"outputTokens"`
						Cached    float64 `json:"cachedReadTokens"`
						Reasoning float64 `json:"reasoningTokens"`
						Calls     float64 `json:"modelCalls"`
					} `json:"usage"`
				} `json:"update"`
			} `json:"params"`
		}
		if !res.DecodeLine(path, n, line, &u) {
			return nil
		}
		up := u.Params.Update
		switch {
		case up.Kind == "user_message_chunk" && up.Meta.PromptIndex != nil:
			turn = *up.Meta.PromptIndex
		case up.Kind == "user_message_chunk" && up.Meta.HostTurn:
			turn = -1
		case up.Kind == "subagent_finished" && up.Child != "":
			r.finished[up.Child] = turn
		case up.Usage != nil:
			x := up.Usage
			cached := importer.Tokens(x.Cached)
			calls := max(importer.Tokens(x.Calls), 1)
			add := loom.Usage{InputTokens: max(importer.Tokens(x.Input)-cached, 0), CacheReadTokens: cached,
				OutputTokens: importer.Tokens(x.Output), ReasoningTokens: importer.Tokens(x.Reasoning), APICalls: calls}
			r.total.Add(add)
			if turn >= 0 {
				t := r.usage[turn]
				t.Add(add)
				r.usage[turn] = t
			}
		}
		return nil
	}, res.TooLong(path))
}
