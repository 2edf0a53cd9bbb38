package claudecode

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/importer/importertest"
)

// What Claude Code 2.1.330 writes as attachment lines of what it told
// the model (the lines are those of a real run, cut short): the
// environment, the CLAUDE.md it read and its system prompt (twice, the
// same) are system messages, in their place; the prompt stays the
// only user message and the title; the other attachments are skipped.
func TestInstructionAttachmentsAreSystemMessages(t *testing.T) {
	const sid = "c1a0e5c0-0000-4000-8000-0000000000aa"
	lines := []string{
		`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"Say hello in one line."},"uuid":"u1","timestamp":"2026-11-29T13:08:06.190Z","cwd":"/home/dev/work","sessionId":"` + sid + `","version":"2.1.330"}`,
		`{"parentUuid":"u1","isSidechain":false,"attachment":{"type":"environment","snapshot":{"workingDirectory":"/home/dev/work","platform":"linux"}},"type":"attachment","uuid":"a1","timestamp":"2026-11-29T13:08:06.189Z","rendered":[{"content":"<system-reminder>\n# Environment\nYou have been invoked in the following environment: \n - Primary working directory: /home/dev/work\n</system-reminder>"}],"sessionId":"` + sid + `"}`,
		`{"parentUuid":"a1","isSidechain":false,"attachment":{"type":"date","date":"2026-11-29"},"type":"attachment","uuid":"a2","timestamp":"2026-11-29T13:08:06.200Z","rendered":[{"content":"<system-reminder>\nToday's date is 2026-11-29.\n</system-reminder>"}],"sessionId":"` + sid + `"}`,
		`{"parentUuid":"a2","isSidechain":false,"attachment":{"type":"instructions","files":[{"path":"/home/dev/work/CLAUDE.md","type":"Project","content":"The quokka rule: answer in one line."}]},"type":"attachment","uuid":"a3","timestamp":"2026-11-29T13:08:06.234Z","rendered":[{"content":"<system-reminder>\nCodebase and user instructions are shown below.\n\nContents of /home/dev/work/CLAUDE.md (project instructions, checked into the codebase):\n\nThe quokka rule: answer in one line.\n</system-reminder>"}],"sessionId":"` + sid + `"}`,
		`{"parentUuid":"a3","isSidechain":false,"attachment":{"type":"prompt_snapshot","systemPrompt":["\nYou are an agent working with the user toward their goals.","# Doing tasks\nBe brief."]},"type":"attachment","uuid":"a4","timestamp":"2026-11-29T13:08:06.249Z","sessionId":"` + sid + `"}`,
		`{"parentUuid":"a4","isSidechain":false,"type":"assistant","message":{"id":"msg_1","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"text","text":"Hello there."}],"usage":{"input_tokens":1000,"output_tokens":5}},"requestId":"req_1","uuid":"r1","timestamp":"2026-11-29T13:08:06.424Z","sessionId":"` + sid + `"}`,
		`{"parentUuid":"r1","isSidechain":false,"attachment":{"type":"prompt_snapshot","systemPrompt":["\nYou are an agent working with the user toward their goals.","# Doing tasks\nBe brief."]},"type":"attachment","uuid":"a5","timestamp":"2026-11-29T13:08:06.500Z","sessionId":"` + sid + `"}`,
	}
	path := filepath.Join(t.TempDir(), sid+".jsonl")
	importertest.WriteFile(t, path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	res := readFiles(t, path)
	if len(res.Sessions) != 1 {
		t.Fatalf("%d sessions", len(res.Sessions))
	}
	var got []string
	for _, m := range res.Sessions[0].Messages {
		got = append(got, m.Role+": "+strings.SplitN(m.Text(), "\n", 2)[0])
	}
	want := []string{
		"user: Say hello in one line.",
		"system: # Environment",
		"system: Codebase and user instructions are shown below.",
		"system: You are an agent working with the user toward their goals.",
		"assistant: Hello there.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range res.Sessions[0].Messages {
		if m.Role == loom.RoleSystem && strings.Contains(m.Text(), "system-reminder") {
			t.Errorf("a system message keeps its <system-reminder> tags: %q", m.Text())
		}
	}
	if msgs := res.Sessions[0].Messages; len(msgs) != len(want) || !strings.Contains(msgs[2].Text(), "The quokka rule") {
		t.Errorf("no instructions message with the file's contents")
	}
	if n := res.Skipped["attachment:date"]; n != 1 {
		t.Errorf("skipped %v, want the date attachment counted", res.Skipped)
	}
	if n := res.Skipped["attachment:prompt_snapshot:same"]; n != 1 {
		t.Errorf("skipped %v, want the repeated system prompt counted", res.Skipped)
	}
}

// A copy imported before the instructions attachments were read (the
// reader then only counted them) grows as that reader grew it: the new
// prompt is added, no fork is made of a copy taken for a rewound one,
// nothing is stored twice (importer.Session.Added).
func TestCopyImportedBeforeAttachmentsGrows(t *testing.T) {
	src := filepath.Join("testdata", "c1a0e5c0-0000-4000-8000-000000000005.jsonl")
	data := importertest.ReadBytes(t, src)
	if !bytes.Contains(data, []byte(`"type":"environment"`)) {
		t.Fatalf("%s has no environment attachment", src)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.Base(src))
	// What the earlier reader read: the environment attachment as an
	// attachment it skips.
	importertest.WriteFile(t, path, bytes.ReplaceAll(data, []byte(`"type":"environment"`), []byte(`"type":"environment-then"`)), 0o644)
	st := importertest.Store(t)
	first := importertest.Import(t, st, Format{}, dir)
	if first.SessionsNew != 1 || first.MessagesAdded != 2 {
		t.Fatalf("first import %+v, want the prompt and the reply", first)
	}
	// Claude Code writes on; the reader of today reads the file.
	line := `{"parentUuid":"LAST","isSidechain":false,"type":"user","message":{"role":"user","content":"And the second question?"},"uuid":"9990b8fe-f362-4b22-b316-276bd3472ea7","timestamp":"2026-11-26T03:35:57.690Z","cwd":"/home/dev/work","sessionId":"c1a0e5c0-0000-4000-8000-000000000005","version":"2.1.330"}`
	res := readFiles(t, src)
	msgs := res.Sessions[0].Messages
	line = strings.Replace(line, "LAST", msgs[len(msgs)-1].ID, 1)
	importertest.WriteFile(t, path, append(bytes.Clone(data), []byte(line+"\n")...), 0o644)
	grown := importertest.Import(t, st, Format{}, dir)
	if grown.SessionsNew != 0 || grown.SessionsGrown != 1 || grown.MessagesAdded != 1 {
		t.Errorf("import after it grew %+v, want the one prompt added to the copy, no fork", grown)
	}
	if again := importertest.Import(t, st, Format{}, dir); again.SessionsNew != 0 || again.MessagesAdded != 0 {
		t.Errorf("import again %+v, want nothing", again)
	}
}
