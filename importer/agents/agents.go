// Package agents is every other agent whose sessions loom reads: it
// imports each one's format package, which registers itself with package
// importer. Adding an agent is its package, a line here and its docs.
package agents

import (
	"github.com/loomhq/loom/importer"

	// The agents (loom lists them by name).
	_ "github.com/loomhq/loom/importer/aider"
	_ "github.com/loomhq/loom/importer/amazonq"
	_ "github.com/loomhq/loom/importer/amp"
	_ "github.com/loomhq/loom/importer/antigravity"
	_ "github.com/loomhq/loom/importer/auggie"
	_ "github.com/loomhq/loom/importer/chatgpt"
	_ "github.com/loomhq/loom/importer/claudeai"
	_ "github.com/loomhq/loom/importer/claudecode"
	_ "github.com/loomhq/loom/importer/cline"
	_ "github.com/loomhq/loom/importer/clinetasks"
	_ "github.com/loomhq/loom/importer/codebuddy"
	_ "github.com/loomhq/loom/importer/codebuff"
	_ "github.com/loomhq/loom/importer/codex"
	_ "github.com/loomhq/loom/importer/commandcode"
	_ "github.com/loomhq/loom/importer/continuedev"
	_ "github.com/loomhq/loom/importer/copilot"
	_ "github.com/loomhq/loom/importer/copilotchat"
	_ "github.com/loomhq/loom/importer/copilotvs"
	_ "github.com/loomhq/loom/importer/cortex"
	_ "github.com/loomhq/loom/importer/crush"
	_ "github.com/loomhq/loom/importer/cursor"
	_ "github.com/loomhq/loom/importer/deepseektui"
	_ "github.com/loomhq/loom/importer/devin"
	_ "github.com/loomhq/loom/importer/droid"
	_ "github.com/loomhq/loom/importer/forge"
	_ "github.com/loomhq/loom/importer/gemini"
	_ "github.com/loomhq/loom/importer/goose"
	_ "github.com/loomhq/loom/importer/gptme"
	_ "github.com/loomhq/loom/importer/grok"
	_ "github.com/loomhq/loom/importer/hermes"
	_ "github.com/loomhq/loom/importer/junie"
	_ "github.com/loomhq/loom/importer/kimi"
	_ "github.com/loomhq/loom/importer/kimiwork"
	_ "github.com/loomhq/loom/importer/kiro"
	_ "github.com/loomhq/loom/importer/muse"
	_ "github.com/loomhq/loom/importer/nanocoder"
	_ "github.com/loomhq/loom/importer/omp"
	_ "github.com/loomhq/loom/importer/openclaw"
	_ "github.com/loomhq/loom/importer/opencode"
	_ "github.com/loomhq/loom/importer/openhands"
	_ "github.com/loomhq/loom/importer/pi"
	_ "github.com/loomhq/loom/importer/qwen"
	_ "github.com/loomhq/loom/importer/qwenpaw"
	_ "github.com/loomhq/loom/importer/reasonix"
	_ "github.com/loomhq/loom/importer/shelley"
	_ "github.com/loomhq/loom/importer/variants"
	_ "github.com/loomhq/loom/importer/vibe"
	_ "github.com/loomhq/loom/importer/warp"
	_ "github.com/loomhq/loom/importer/windsurf"
	_ "github.com/loomhq/loom/importer/zed"
	_ "github.com/loomhq/loom/importer/zencoder"
)

// Formats returns the formats of every agent loom reads.
func Formats() []importer.Format { return importer.Registered() }
