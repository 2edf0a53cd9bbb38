package clitest

import (
	"github.com/loomhq/loom/cli"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/claudecode"
	clineim "github.com/loomhq/loom/importer/cline"
	"github.com/loomhq/loom/importer/codex"
	"github.com/loomhq/loom/importer/continuedev"
	copilotim "github.com/loomhq/loom/importer/copilot"
	droidim "github.com/loomhq/loom/importer/droid"
	"github.com/loomhq/loom/importer/gemini"
	"github.com/loomhq/loom/importer/opencode"
	piim "github.com/loomhq/loom/importer/pi"
	qwenim "github.com/loomhq/loom/importer/qwen"
)

func AllFormats(f *cli.Factory) {
	f.Formats = []importer.Format{claudecode.Format{}, clineim.Format{}, codex.Format{}, continuedev.Format{}, copilotim.Format{}, droidim.Format{},
		gemini.Format{}, opencode.Kilo, opencode.Format{}, piim.Format{}, qwenim.Format{}}
}

// HandoffJSON is what `session handoff --json` prints.
type HandoffJSON struct {
	Tool        string         `json:"tool"`
	Path        string         `json:"path"`
	SessionID   string         `json:"session_id"`
	Resume      string         `json:"resume"`
	From        string         `json:"from_session_id"`
	Dir         string         `json:"dir"`
	Messages    int            `json:"messages"`
	ToolCalls   int            `json:"tool_calls"`
	ToolRecords int            `json:"tool_records"`
	Dropped     map[string]int `json:"dropped"`
	FirstTurn   int            `json:"first_turn"`
	LastTurn    int            `json:"last_turn"`
	Turns       int            `json:"turns"`
	Redacted    int            `json:"redacted"`
}
