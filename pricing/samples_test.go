package pricing_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/pricing"
)

// samples holds real session files of other agents.
const samples = "../testdata/agent-sessions"

// sampleModels returns the models that answered in a tool's real session
// files, with how many replies each gave: the model of a Claude Code
// assistant line, of a Codex turn_context, of a Gemini CLI gemini record.
func sampleModels(t *testing.T, glob string, model func(line map[string]any) string) map[string]int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(samples, glob))
	if len(files) == 0 {
		t.Fatalf("no sample files match %s", glob)
	}
	models := map[string]int{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			if m := model(line); m != "" {
				models[m]++
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return models
}

func field(v any, path ...string) string {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// The models of the real sessions other agents wrote are priced, under
// the provider their importer gives them, so that an imported session
// has a cost; a name a company gateway gave a deployment (Codex's sample
// calls its model aide-gpt-5) is not a price loom knows, and stays
// unknown rather than guessed.
func TestSampleModelsArePriced(t *testing.T) {
	u := loom.Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 5000, CacheWriteTokens: 200}
	for _, tc := range []struct {
		tool, provider, glob string
		model                func(map[string]any) string
		unknown              map[string]bool
	}{
		{"claude-code", "anthropic", "claude-code/*/*.jsonl", func(l map[string]any) string {
			if field(l, "type") != "assistant" {
				return ""
			}
			return field(l, "message", "model")
		}, nil},
		{"claude-code sub-agents", "anthropic", "claude-code/*/*/subagents/*.jsonl", func(l map[string]any) string {
			if field(l, "type") != "assistant" {
				return ""
			}
			return field(l, "message", "model")
		}, nil},
		{"codex", "openai", "codex/*.jsonl", func(l map[string]any) string {
			if field(l, "type") != "turn_context" {
				return ""
			}
			return field(l, "payload", "model")
		}, map[string]bool{"aide-gpt-5": true}},
		{"gemini", "google", "gemini/*.jsonl", func(l map[string]any) string {
			if field(l, "type") != "gemini" {
				return ""
			}
			return field(l, "model")
		}, nil},
	} {
		models := sampleModels(t, tc.glob, tc.model)
		if len(models) == 0 {
			t.Errorf("%s: no models found in the samples", tc.tool)
		}
		for m := range models {
			cost, ok := pricing.Cost(tc.provider, m, u)
			switch {
			case tc.unknown[m] && ok:
				t.Errorf("%s: %s is priced (%v), a guess", tc.tool, m, cost)
			case !tc.unknown[m] && (!ok || cost <= 0):
				t.Errorf("%s: %s %s has no price", tc.tool, tc.provider, m)
			}
		}
		t.Logf("%s: %v", tc.tool, models)
	}
}
