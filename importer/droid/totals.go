package droid

import (
	"encoding/json"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
)

// settings is what the reader uses of <id>.settings.json: the
// session's token totals. droid records no usage per reply.
type settings struct {
	TokenUsage *struct {
		Input      float64 `json:"inputTokens"`
		Output     float64 `json:"outputTokens"`
		CacheWrite float64 `json:"cacheCreationTokens"`
		CacheRead  float64 `json:"cacheReadTokens"`
		Thinking   float64 `json:"thinkingTokens"`
	} `json:"tokenUsage"`
}

// totals puts the session's token totals, read from the settings file
// at path, on its last reply, the only place loom can keep a session's
// usage that no reply has of its own, with the session's model calls:
// one a reply, one a compaction's summary (the totals count both). A
// settings file that cannot be read is a problem; the session is kept
// without usage.
func totals(res *importer.Result, path string) {
	f, _, err := importer.Open(path, importer.MaxDocument)
	if err != nil {
		res.Problemf(path, 0, err.Error())
		return
	}
	defer f.Close()
	var st settings
	if err := json.NewDecoder(f).Decode(&st); err != nil {
		res.Problemf(path, 0, "not droid's session settings: "+importer.Excerpt(err.Error()))
		return
	}
	u := st.TokenUsage
	if u == nil {
		return
	}
	msgs := res.Sessions[0].Messages
	var calls int64
	for _, m := range msgs {
		if m.Role == loom.RoleAssistant || m.Role == loom.RoleSummary {
			calls++
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == loom.RoleAssistant {
			msgs[i].Usage = loom.Usage{InputTokens: importer.Tokens(u.Input), OutputTokens: importer.Tokens(u.Output), ReasoningTokens: importer.Tokens(u.Thinking),
				CacheReadTokens: importer.Tokens(u.CacheRead), CacheWriteTokens: importer.Tokens(u.CacheWrite), APICalls: calls}
			return
		}
	}
}
