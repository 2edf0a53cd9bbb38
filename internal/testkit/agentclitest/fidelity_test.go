package agentclitest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/providertest"
)

// recorder is a testing.TB that keeps what a check reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Helper()             {}

// TestCheckFidelity: sessions that hold what the model answered pass; a
// reply lost, one kept twice, a call not counted, a summary missing, a
// sub-agent unlinked and an answer no script gave are each reported,
// and a call named not recorded is left out of the counts.
func TestCheckFidelity(t *testing.T) {
	req := func(s string) providertest.Request {
		return providertest.Request{Raw: []byte(`{"messages":[{"role":"user","content":"` + s + `"}]}`)}
	}
	answers := []Answer{
		{Request: req("Say hello."), Text: "Hello.", Reasoning: "Greet.", Usage: Usage{Input: 100, Cached: 20, Output: 5}},
		{Request: req("Summarize it."), Text: "A summary.", Usage: Usage{Input: 50, Output: 9}},
	}
	good := func() []Imported {
		main := &loom.Session{ID: "s", Key: "x:s", Usage: loom.Usage{InputTokens: 80, CacheReadTokens: 20, OutputTokens: 5, APICalls: 1, Compactions: 1}}
		return []Imported{{Session: main, Messages: []*loom.Message{
			{Role: loom.RoleUser, Parts: []loom.Part{{Type: loom.PartText, Text: "Say hello."}}},
			{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartReasoning, Text: "Greet."}, {Type: loom.PartText, Text: "Hello."}}},
			{Role: loom.RoleSummary, Parts: []loom.Part{{Type: loom.PartText, Text: "A summary."}}},
		}}}
	}
	summary := func(r providertest.Request) bool { return strings.Contains(string(r.Raw), "Summarize") }
	e := Expect{Summary: summary, NotRecorded: map[string]func(providertest.Request) bool{"the summary's call": summary}}
	check := func(sessions []Imported, answers []Answer, e Expect) []string {
		r := &recorder{TB: t}
		CheckFidelity(r, answers, sessions, e)
		return r.errs
	}
	if errs := check(good(), answers, e); len(errs) != 0 {
		t.Errorf("faithful sessions: %q", errs)
	}
	for name, c := range map[string]struct {
		change func([]Imported) ([]Imported, []Answer, Expect)
		want   string
	}{
		"reply lost": {func(s []Imported) ([]Imported, []Answer, Expect) {
			s[0].Messages[1].Parts = s[0].Messages[1].Parts[:1]
			return s, answers, e
		}, "missing 1× \"Hello.\""},
		"reply twice": {func(s []Imported) ([]Imported, []Answer, Expect) {
			s[0].Messages = append(s[0].Messages, &loom.Message{Role: loom.RoleAssistant, Parts: []loom.Part{{Type: loom.PartText, Text: "Hello."}}})
			return s, answers, e
		}, "1× more \"Hello.\""},
		"call counted": {func(s []Imported) ([]Imported, []Answer, Expect) {
			return s, answers, Expect{Summary: summary}
		}, "the model answered 2"},
		"summary missing": {func(s []Imported) ([]Imported, []Answer, Expect) {
			s[0].Messages = s[0].Messages[:2]
			return s, answers, e
		}, "0 summary messages"},
		"sub-agent unlinked": {func(s []Imported) ([]Imported, []Answer, Expect) {
			return append(s, Imported{Session: &loom.Session{ID: "c", Key: "x:c", Kind: loom.KindSubagent, ParentID: "s"}}), answers, e
		}, "no agent part"},
		"made up": {func(s []Imported) ([]Imported, []Answer, Expect) {
			a := append([]Answer(nil), answers...)
			a[0].Made = true
			return s, a, e
		}, "answered by no script"},
		"prompt never sent": {func(s []Imported) ([]Imported, []Answer, Expect) {
			s[0].Messages[0].Parts[0].Text = "Something else."
			return s, answers, e
		}, "never sent"},
	} {
		errs := check(c.change(good()))
		if !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("%s: reported %q, want %q", name, errs, c.want)
		}
	}
}
