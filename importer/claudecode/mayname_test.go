package claudecode

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/loomhq/loom/internal/testkit/testseed"
)

// A tool result that mayName passes over is one whose decoding names
// no agent: generated objects with keys spelled in every case, escaped
// or not, and other keys.
func TestMayNameMissesNoAgent(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 7))
	keys := []string{"agentId", "agentid", "AGENTID", "aGeNtId", `agent\u0049d`, `\u0061gentId`, "agent", "agentIds", "id", "agent_id", "content"}
	passed := 0
	for range 20000 {
		raw := []byte("{")
		for i := range r.IntN(4) {
			if i > 0 {
				raw = append(raw, ',')
			}
			raw = append(raw, '"')
			raw = append(raw, keys[r.IntN(len(keys))]...)
			raw = append(raw, `":"a`...)
			raw = strconv.AppendInt(raw, r.Int64N(100), 10)
			raw = append(raw, '"')
		}
		raw = append(raw, '}')
		var v struct {
			AgentID string `json:"agentId"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if !mayName(raw, "agentid") {
			passed++
			if v.AgentID != "" {
				t.Fatalf("mayName passes over %s, which names agent %q", raw, v.AgentID)
			}
		}
	}
	if passed == 0 {
		t.Fatal("mayName passed over none")
	}
}

// toolMetadata writes a small toolUseResult as json.Marshal writes it in
// {"toolUseResult": …}: generated results, indented or not, with what
// encoding/json escapes in their strings.
func TestToolMetadataIsMarshal(t *testing.T) {
	seed := testseed.Seed(t)
	r := rand.New(rand.NewPCG(seed, 8))
	words := []string{"a", " ", "<b>", "&", "\u2028", "é", "\n", "\"", `\`, "exit", "0"}
	word := func() string {
		var s string
		for range r.IntN(5) {
			s += words[r.IntN(len(words))]
		}
		return s
	}
	for range 5000 {
		v := map[string]any{}
		for range r.IntN(5) {
			switch r.IntN(3) {
			case 0:
				v[word()] = word()
			case 1:
				v[word()] = r.IntN(1000)
			default:
				v[word()] = []any{word(), true, nil, map[string]any{word(): word()}}
			}
		}
		var raw []byte
		var err error
		if r.IntN(2) == 0 {
			raw, err = json.MarshalIndent(v, " ", "\t")
		} else {
			var b strings.Builder
			e := json.NewEncoder(&b)
			e.SetEscapeHTML(false)
			err = e.Encode(v)
			raw = []byte(b.String())
		}
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(struct {
			ToolUseResult json.RawMessage `json:"toolUseResult"`
		}{bytes.TrimSpace(raw)})
		if err != nil {
			t.Fatal(err)
		}
		if got := toolMetadata(raw); string(got) != string(want) {
			t.Fatalf("toolMetadata(%s)\n got %s\nwant %s", raw, got, want)
		}
	}
}
