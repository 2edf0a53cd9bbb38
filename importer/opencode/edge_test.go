package opencode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer"
	"github.com/loomhq/loom/importer/importertest"
)

// writeTree writes files (paths relative to a storage directory) into a
// new data directory and returns it.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, storageDir, filepath.FromSlash(name))
		importertest.MkdirAll(t, filepath.Dir(p))
		importertest.WriteFile(t, p, []byte(body), 0o644)
	}
	return dir
}

// TestVariants reads records the fixture does not hold: a tool's
// attached files, a call still pending, a reply with an error and no
// parts, a command run as a sub-task, symbol and resource sources, an
// old placeholder title, a session with no directory.
func TestVariants(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"session/global/ses_b.json": `{"id":"ses_b","title":"New Session - 2025-06-01T10:00:00.000Z","version":"0.9.1","time":{"created":1748772000000,"updated":1748772060000},"parentID":"ses_b"}`,
		"message/ses_b/msg_1.json":  `{"role":"user","time":{"created":1748772001000}}`,
		"part/msg_1/prt_1.json":     `{"type":"subtask","prompt":"review the diff","description":"Review","agent":"reviewer"}`,
		"message/ses_b/msg_2.json":  `{"role":"assistant","time":{"created":1748772002000},"modelID":"gpt-5","providerID":"openai","path":{"cwd":"/srv/app","root":"/srv/app"},"error":{"name":"APIError","data":{"message":"rate limited","isRetryable":true}},"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}`,
		"message/ses_b/msg_3.json":  `{"role":"user","time":{"created":1748772003000}}`,
		"part/msg_3/prt_1.json":     `{"type":"file","mime":"text/plain","filename":"main.go","url":"file:///srv/app/main.go","source":{"type":"symbol","path":"main.go","name":"main","kind":12,"range":{},"text":{"value":"@main","start":4,"end":9}}}`,
		"part/msg_3/prt_2.json":     `{"type":"file","mime":"text/plain","url":"mcp://docs/readme","source":{"type":"resource","clientName":"docs","uri":"mcp://docs/readme","text":{"value":"@readme","start":0,"end":7}}}`,
		"message/ses_b/msg_4.json":  `{"role":"assistant","time":{"created":1748772004000,"completed":1748772009000},"modelID":"gpt-5","providerID":"openai","tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":0,"write":0}}}`,
		"part/msg_4/prt_1.json":     `{"type":"tool","callID":"call_1","tool":"read","state":{"status":"completed","input":{"filePath":"/srv/app/logo.png"},"output":"Image read","title":"logo.png","metadata":{},"time":{"start":1748772005000,"end":1748772006000},"attachments":[{"id":"prt_x","type":"file","mime":"image/png","url":"data:image/png;base64,iVBORw0KGgo=","filename":"logo.png"}]}}`,
		"part/msg_4/prt_2.json":     `{"type":"tool","callID":"call_2","tool":"bash","state":{"status":"pending","input":{},"raw":""}}`,
		"part/msg_4/prt_3.json":     `{"type":"tool","tool":"todowrite"}`,
		"part/msg_4/prt_4.json":     `{"type":"tool","callID":"call_4","tool":"task","state":{"status":"error","input":{"description":"d","prompt":"p"},"error":"Tool execution aborted","metadata":{"sessionId":"ses_c"},"time":{"start":1748772007000,"end":1748772008000}}}`,
	})
	a := readRoot(t, dir)
	equal(t, "problems", a.problems, []importer.Problem(nil))
	equal(t, "skipped", a.skipped, map[string]int{"subtask": 1, "empty-user-message": 1})
	s := a.session(t, "ses_b")
	equal(t, "kind", s.Kind, loom.KindMain) // its own parent is no parent
	equal(t, "title", s.Title, "")
	equal(t, "cwd", s.Cwd, "/srv/app")
	equal(t, "model", s.Model+"/"+s.Provider, "gpt-5/openai")
	equal(t, "roles", roles(s), map[string]int{"user": 1, "assistant": 2})

	failed := importertest.Message(t, s, "msg_2")
	equal(t, "error", failed.Error, &loom.MessageError{Message: "rate limited", Type: "APIError"})
	equal(t, "error parts", len(failed.Parts), 0)
	equal(t, "error usage", failed.Usage, loom.Usage{})

	files := importertest.Message(t, s, "msg_3")
	equal(t, "symbol", *files.Parts[0].Source, loom.FileSource{Type: "symbol", Path: "main.go", Text: "@main", Start: 4, End: 9})
	equal(t, "resource", *files.Parts[1].Source, loom.FileSource{Type: "resource", Path: "mcp://docs/readme", Text: "@readme", End: 7})

	reply := importertest.Message(t, s, "msg_4")
	equal(t, "reply parts", partTypes(reply), []string{"tool", "file", "tool", "tool", "tool", "agent"})
	equal(t, "reply usage", reply.Usage, loom.Usage{InputTokens: 10, OutputTokens: 5, APICalls: 1})
	equal(t, "attachment", reply.Parts[1], loom.Part{ID: "prt_1/0", Type: loom.PartFile, Mime: "image/png",
		Filename: "logo.png", URL: "data:image/png;base64,iVBORw0KGgo="})
	equal(t, "pending", reply.Parts[2].Status+" "+reply.Parts[2].CallID, "pending call_2")
	// No state and no call id: pending, under the part's id.
	equal(t, "stateless", reply.Parts[3].Status+" "+reply.Parts[3].CallID+" "+string(reply.Parts[3].Input), "pending prt_3 {}")
	equal(t, "failed task", reply.Parts[4].Status+" "+reply.Parts[4].Error, "error Tool execution aborted")
	equal(t, "failed task agent", reply.Parts[5], loom.Part{ID: "prt_4/agent", Type: loom.PartAgent, Name: "task", SessionID: "ses_c"})
}

// TestMalformed: a record that cannot be read is reported with its file
// and line, and everything else is still read.
func TestMalformed(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"session/p/ses_m.json":     "{\n  \"title\": \"Broken things\",\n  \"directory\": \"/w\",\n  \"time\": {\"created\": 1748772000000, \"updated\": 1748772000000}\n}",
		"message/ses_m/msg_1.json": `{"role":"user","time":{"created":1}}`,
		"part/msg_1/prt_1.json":    `{"type":"text","text":"first"}`,
		"part/msg_1/prt_2.json":    "{\n  \"type\": \"text\",\n  \"text\": 5\n}",
		"message/ses_m/msg_2.json": "{\n  \"role\": \"assistant\",\n  \"time\": {\"created\": 2,\n}",
		"part/msg_2/prt_1.json":    `{"type":"text","text":"lost with its message"}`,
		"message/ses_m/msg_3.json": `{"role":"assistant","time":{"created":3},"tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}}`,
		"part/msg_3/prt_1.json":    `{"type":"text","text":"still here"}`,
		"part/msg_3/prt_2.json":    `{"type":"tool","callID":"c","state":{"status":"completed","input":{},"output":"x"}}`,
		"part/msg_3/prt_3.json":    `{"type":"tool","callID":"d","tool":"bash","state":{"status":"exploded","input":{}}}`,
		"part/msg_3/prt_4.json":    `{"text":"no type"}`,
		"part/msg_3/prt_5.json":    `[1, 2]`,
		"message/ses_m/msg_4.json": `{"role":"critic","time":{"created":4}}`,
		"part/msg_4/prt_1.json":    `{"type":"text","text":"a role from the future"}`,
		"message/ses_m/msg_5.json": `{"role":"user","time":{"created":5}}`,
		"part/msg_5/prt_1.json":    `{"type":"text","text":"last"}`,
	})
	storage := filepath.Join(dir, storageDir)
	rel := func(p string) string { return filepath.Join(storage, filepath.FromSlash(p)) }
	a := readRoot(t, dir)
	equal(t, "problems", a.problems, []importer.Problem{
		{File: rel("part/msg_1/prt_2.json"), Line: 3, Reason: "invalid JSON: json: cannot unmarshal number into Go struct field partInfo.text of type string"},
		{File: rel("message/ses_m/msg_2.json"), Line: 4, Reason: "invalid JSON: invalid character '}' looking for beginning of object key string"},
		{File: rel("part/msg_3/prt_5.json"), Line: 1, Reason: "invalid JSON: json: cannot unmarshal array into Go value of type opencode.partInfo"},
		{File: rel("part/msg_3/prt_2.json"), Reason: "tool part prt_2 has no tool name"},
		{File: rel("part/msg_3/prt_3.json"), Reason: `tool part prt_3 has unknown status "exploded"`},
		{File: rel("part/msg_3/prt_4.json"), Reason: "part prt_4 has no type"},
	})
	equal(t, "skipped", a.skipped, map[string]int{"orphan-part": 2, "unknown:critic": 1})
	s := a.session(t, "ses_m")
	equal(t, "title", s.Title, "Broken things")
	var texts []string
	for _, m := range s.Messages {
		texts = append(texts, m.Role+":"+m.Text())
	}
	equal(t, "messages", texts, []string{"user:first", "assistant:still here", "user:last"})
	equal(t, "tools", tools(s), []string{"bash:running"})

	// A malformed session file: reported, its messages still read under
	// the id its file name gives.
	importertest.WriteFile(t, rel("session/p/ses_m.json"), []byte(`{"title": "x",`), 0o644)
	a = readRoot(t, dir)
	equal(t, "session problem", a.problems[0], importer.Problem{File: rel("session/p/ses_m.json"), Line: 1, Reason: "invalid JSON: unexpected end of JSON input"})
	equal(t, "session read", len(a.session(t, "ses_m").Messages), 3)
}

// TestVanished: files opencode deleted after Bundles listed them are
// left out quietly; a bundle whose session file is gone cannot be read.
func TestVanished(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"session/p/ses_v.json":     `{"title":"v","time":{"created":1,"updated":1}}`,
		"message/ses_v/msg_1.json": `{"role":"user","time":{"created":1}}`,
		"part/msg_1/prt_1.json":    `{"type":"text","text":"kept"}`,
		"message/ses_v/msg_2.json": `{"role":"user","time":{"created":2}}`,
		"part/msg_2/prt_1.json":    `{"type":"text","text":"reverted"}`,
	})
	bs, err := Format{}.Bundles(context.Background(), dir)
	if err != nil || len(bs) != 1 {
		t.Fatal(bs, err)
	}
	storage := filepath.Join(dir, storageDir)
	if err := os.Remove(filepath.Join(storage, "part", "msg_2", "prt_1.json")); err != nil {
		t.Fatal(err)
	}
	res, err := Format{}.Read(context.Background(), bs[0])
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "problems", res.Problems, []importer.Problem(nil))
	equal(t, "skipped", res.Skipped, map[string]int{"empty-user-message": 1})
	equal(t, "messages", len(res.Sessions[0].Messages), 1)

	if err := os.Remove(bs[0].Name()); err != nil {
		t.Fatal(err)
	}
	if _, err := (Format{}).Read(context.Background(), bs[0]); err == nil {
		t.Error("read a bundle whose session file is gone")
	}
}

// TestTooLarge: a record over the bound is reported, not read.
func TestTooLarge(t *testing.T) {
	defer func(n int64) { maxRecord = n }(maxRecord)
	big := `{"type":"text","text":"` + strings.Repeat("x", 300) + `"}`
	dir := writeTree(t, map[string]string{
		"session/p/ses_l.json":     `{"title":"l","time":{"created":1,"updated":1}}`,
		"message/ses_l/msg_1.json": `{"role":"user","time":{"created":1}}`,
		"part/msg_1/prt_1.json":    big,
		"part/msg_1/prt_2.json":    `{"type":"text","text":"small"}`,
	})
	maxRecord = 256
	a := readRoot(t, dir)
	equal(t, "problems", a.problems, []importer.Problem{{File: filepath.Join(dir, storageDir, "part", "msg_1", "prt_1.json"), Reason: "larger than 256 bytes"}})
	equal(t, "text", a.sessions[0].Messages[0].Text(), "small")
}
