package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/internal/testkit/storetest"
)

// Out of time, search_sessions and recall give what they found in time,
// and say so: "partial": true in their structured content and a line
// in their text; never other messages in the place of hits.
func TestMCPSearchAndRecallOutOfTimeArePartial(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	opts, _ := w.options(&config.Config{})
	opts.ReadStore = func(context.Context) (loom.Engine, error) { return storetest.SlowTiers{Engine: w.st}, nil }
	got := serve(t, opts,
		tool("search_sessions", map[string]any{"query": "pool", "keyword": true}),
		tool("recall", map[string]any{"prompt": "pool"}),
	)
	var search struct {
		Content           []struct{ Text string }
		StructuredContent struct {
			Hits    []loom.SearchHit
			Partial bool
		}
	}
	if err := json.Unmarshal(got[1], &search); err != nil || !search.StructuredContent.Partial || len(search.StructuredContent.Hits) != 1 ||
		search.StructuredContent.Hits[0].SessionID != w.apiS.ID || len(search.Content) == 0 || !strings.Contains(search.Content[0].Text, "partial:") {
		t.Errorf("search_sessions out of time: %s (%v), want the one hit found in time, partial", got[1], err)
	}
	var rec struct {
		Content           []struct{ Text string }
		StructuredContent struct {
			Turns []struct {
				SessionID string `json:"session_id"`
			}
			Partial bool
		}
	}
	if err := json.Unmarshal(got[2], &rec); err != nil || !rec.StructuredContent.Partial || len(rec.StructuredContent.Turns) == 0 ||
		len(rec.Content) == 0 || !strings.Contains(rec.Content[0].Text, "partial:") {
		t.Errorf("recall out of time: %s (%v), want the turns found in time, partial", got[2], err)
	}
	for _, tr := range rec.StructuredContent.Turns {
		if tr.SessionID != w.apiS.ID {
			t.Errorf("recall out of time gave a turn of %s, not a hit", tr.SessionID)
		}
	}
}
