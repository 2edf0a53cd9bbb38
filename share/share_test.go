package share_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/secrets"
	"github.com/loomhq/loom/share"
)

func session() (*loom.Session, []*loom.Message) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	s := &loom.Session{Title: "deploy", Project: loom.Project{Root: "/home/ann/src/api"}, CreatedAt: at, UpdatedAt: at}
	var msgs []*loom.Message
	for i, text := range []string{
		"first prompt in /home/ann/src/api/main.go",
		"answer",
		"second prompt: key AKIAQ3EGUZW7NXK2RT5M in C:\\Users\\ann\\x",
		"answer two by ann",
		"third prompt",
	} {
		role := loom.RoleUser
		if i%2 == 1 {
			role = loom.RoleAssistant
		}
		msgs = append(msgs, &loom.Message{Seq: int64(i + 1), Turn: i/2 + 1, Role: role, CreatedAt: at,
			Parts: []loom.Part{{Type: loom.PartText, Text: text}, {Type: loom.PartStepFinish}}})
	}
	msgs[4].Parts = append(msgs[4].Parts, loom.Part{Type: loom.PartFile, Filename: "shot.png", URL: "data:image/png;base64,AAAA"})
	return s, msgs
}

func texts(p *share.Payload) string {
	var b strings.Builder
	for _, m := range p.Messages {
		for _, pt := range m.Parts {
			b.WriteString(pt.Text + pt.URL + "|")
		}
	}
	return b.String()
}

// Build shares the turns asked for, without the messages left out,
// redacted, and finds (or hides) paths and usernames; step markers and
// inline file bytes stay behind.
func TestBuild(t *testing.T) {
	s, msgs := session()
	hider := &share.Hider{Root: s.Project.Root, Users: []string{"ann"}}
	p, pv, err := share.Build(s, msgs, share.Options{From: 1, To: 2, Exclude: map[int64]bool{2: true}, Redact: secrets.Default(), Hider: hider})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Messages != 3 || pv.Excluded != 1 || p.Turns != "1-2" || pv.Redactions != 1 {
		t.Errorf("preview %+v, turns %q", pv, p.Turns)
	}
	got := texts(p)
	if strings.Contains(got, "AKIA") || strings.Contains(got, "answer|") || strings.Contains(got, "third") {
		t.Errorf("shared %q", got)
	}
	if strings.Join(pv.Users, ",") != "ann" || len(pv.Paths) != 2 {
		t.Errorf("found paths %q and users %q", pv.Paths, pv.Users)
	}
	for _, m := range p.Messages {
		for _, pt := range m.Parts {
			if pt.Type == loom.PartStepFinish {
				t.Error("a step marker was shared")
			}
		}
	}

	p, pv, err = share.Build(s, msgs, share.Options{Hider: hider, HidePaths: true})
	if err != nil {
		t.Fatal(err)
	}
	got = texts(p)
	for _, want := range []string{"<project>/main.go", `~\x`, "answer two by <user>"} {
		if !strings.Contains(got, want) {
			t.Errorf("hidden text lacks %q: %s", want, got)
		}
	}
	if strings.Contains(got, "ann") || strings.Contains(got, "data:") || len(pv.Users) != 0 || pv.Hidden != 3 {
		t.Errorf("after hiding: %s; preview %+v", got, pv)
	}

	if _, _, err := share.Build(s, msgs, share.Options{From: 9}); loom.ErrorCode(err) != loom.EINVALID {
		t.Errorf("no message in the turns: %v", err)
	}
}

// A sealed share opens with its key only, and not once altered.
func TestSeal(t *testing.T) {
	s, msgs := session()
	p, _, err := share.Build(s, msgs, share.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blob, key, err := share.Seal(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(blob), "prompt") || len(key) != 43 {
		t.Fatalf("blob holds plaintext, or key %q is not 256 bits", key)
	}
	back, err := share.Open(blob, key)
	if err != nil || texts(back) != texts(p) || back.Title != "deploy" {
		t.Fatalf("open: %v", err)
	}
	_, other, _ := share.Seal(p)
	altered := append([]byte(nil), blob...)
	altered[len(altered)/2] ^= 1
	for name, tc := range map[string]struct {
		blob []byte
		key  string
	}{"another key": {blob, other}, "altered": {altered, key}, "short key": {blob, key[:20]}, "empty": {nil, key}} {
		if _, err := share.Open(tc.blob, tc.key); loom.ErrorCode(err) != loom.EINVALID {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
}

func TestParseTurnsAndSeqs(t *testing.T) {
	for in, want := range map[string][2]int{"3": {3, 3}, "2-5": {2, 5}, "4-": {4, 0}, "-2": {0, 2}} {
		a, b, err := share.ParseTurns(in)
		if err != nil || a != want[0] || b != want[1] {
			t.Errorf("ParseTurns(%q) = %d, %d, %v; want %v", in, a, b, err, want)
		}
	}
	for _, bad := range []string{"", "-", "0", "5-2", "a-b", "1-2-3"} {
		if _, _, err := share.ParseTurns(bad); err == nil {
			t.Errorf("ParseTurns(%q) took it", bad)
		}
	}
	got, err := share.ParseSeqs([]string{"3,7-9", "#12"})
	if err != nil || len(got) != 5 || !got[8] || !got[12] {
		t.Errorf("ParseSeqs = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "5-2", "x", ""} {
		if _, err := share.ParseSeqs([]string{bad}); err == nil {
			t.Errorf("ParseSeqs(%q) took it", bad)
		}
	}
}
