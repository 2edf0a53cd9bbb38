package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/sqlite"
)

// FuzzToolArguments calls each tool with arbitrary arguments over a real
// store: every call answers (a result or a tool error) within the call's
// time limit, never by a recovered panic, and with a bounded text.
func FuzzToolArguments(f *testing.F) {
	dir := f.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	s := &loom.Session{ID: loom.NewID(), UserID: "u", Key: "cli:api", Title: "retry backoff", Project: loom.Project{ID: "0123456789abcdef", Name: "api", Root: "/src/api"}}
	long := strings.Repeat("output line of a tool ", 2000)
	for turn := range 3 {
		if err := st.Append(context.Background(), s,
			&loom.Message{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "what about the retry backoff?"}}},
			&loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{
				{Type: loom.PartReasoning, Text: "thinking"},
				{Type: loom.PartTool, CallID: "c" + string(rune('0'+turn)), Name: "shell", Status: loom.ToolCompleted, Input: json.RawMessage(`{"cmd":"ls"}`), Output: json.RawMessage(`"` + long + `"`)},
				{Type: loom.PartText, Text: "it doubles up to 30 s"},
			}}); err != nil {
			f.Fatal(err)
		}
	}
	t := &tools{cfg: Config{
		Store:       func(context.Context) (loom.Engine, error) { return st, nil },
		User:        "u",
		Project:     s.Project,
		Memory:      func(string) (string, string) { return filepath.Join(dir, "MEMORY.md"), filepath.Join(dir, "USER.md") },
		Now:         time.Now,
		CallTimeout: 5 * time.Second,
	}}
	t.cfg.Logger = slog.New(slog.DiscardHandler)
	all := t.all()
	for _, seed := range []string{
		`{"query":"retry"}`, `{"query":"\"retry backoff\"","limit":1,"all_projects":true}`, `{"query":"x","since":"7d","until":"2030-01-01"}`,
		`{"ref":"retry backoff","limit":2}`, `{"ref":"` + s.ID[:8] + `","seq":3,"offset":2000}`, `{"ref":"cli:api","turn":2}`, `{"ref":"cli:api","turn":1,"limit":1,"after_seq":1}`,
		`{"limit":1}`, `{"cursor":"bad"}`, `{"action":"read"}`, `{"action":"append","text":"note"}`,
		`null`, `[]`, `{"query":null}`, `{"limit":1e309}`, `{"query":"` + strings.Repeat("a ", 600) + `"}`,
	} {
		for i := range all {
			f.Add(uint8(i), []byte(seed))
		}
	}
	f.Fuzz(func(ft *testing.T, which uint8, args []byte) {
		tl := all[int(which)%len(all)]
		// Appends would pile up across calls: each call starts afresh.
		os.Remove(filepath.Join(dir, "MEMORY.md"))
		os.Remove(filepath.Join(dir, "USER.md"))
		start := time.Now()
		res, err := t.handler(tl)(context.Background(), &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: tl.tool.Name, Arguments: args}})
		if err != nil {
			ft.Fatalf("%s(%q): a protocol error %v", tl.tool.Name, args, err)
		}
		if d := time.Since(start); d > t.cfg.CallTimeout+2*time.Second {
			ft.Fatalf("%s(%q) took %v", tl.tool.Name, args, d)
		}
		text := ""
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				text += tc.Text
			}
		}
		if strings.Contains(text, "failed inside loom") {
			ft.Fatalf("%s(%q) panicked", tl.tool.Name, args)
		}
		if len(text) > 4<<20 {
			ft.Fatalf("%s(%q) answered %d bytes", tl.tool.Name, args, len(text))
		}
		if res.IsError && text == "" {
			ft.Fatalf("%s(%q): a tool error with no sentence", tl.tool.Name, args)
		}
	})
}
