package realcorpus

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// Every needle of every secret is in its unredacted message: a miss is
// never the corpus's own mistake.
func TestNeedlesInMessage(t *testing.T) {
	for _, s := range SecretCorpus(7) {
		if got, want := len(s.Leaks(s.Msg)), len(s.Needles)+len(s.B64); got != want {
			t.Errorf("%s in %s: %d of %d needles readable before redaction", s.Kind, s.Carrier, got, want)
		}
		for _, n := range s.Needles {
			if l := strings.ToLower(n); strings.Contains(l, "example") || strings.Contains(l, "xxxx") {
				t.Errorf("%s in %s: a needle reads as a placeholder: %s", s.Kind, s.Carrier, hint(n))
			}
		}
	}
}

func TestSameCorpusEachRun(t *testing.T) {
	a, b := SecretCorpus(3), SecretCorpus(3)
	for i := range a {
		if a[i].Kind != b[i].Kind || a[i].Carrier != b[i].Carrier || !reflect.DeepEqual(a[i].Needles, b[i].Needles) {
			t.Fatalf("secret %d differs between two runs", i)
		}
	}
}

// rewrite returns m with every output, input and text passed through f.
func rewrite(m *loom.Message, f func(string) string) *loom.Message {
	c := *m
	c.Parts = append([]loom.Part(nil), m.Parts...)
	for i := range c.Parts {
		p := &c.Parts[i]
		p.Text = f(p.Text)
		if p.Source != nil {
			src := *p.Source
			src.Text = f(src.Text)
			p.Source = &src
		}
		for _, raw := range []*json.RawMessage{&p.Input, &p.Output} {
			var s string
			if json.Unmarshal(*raw, &s) == nil {
				b, _ := json.Marshal(f(s))
				*raw = b
				continue
			}
			var obj map[string]string
			if json.Unmarshal(*raw, &obj) == nil {
				for k, v := range obj {
					obj[k] = f(v)
				}
				b, _ := json.Marshal(obj)
				*raw = b
			}
		}
	}
	return &c
}

// A redaction that removes the value whole is a catch; one that leaves
// half of it is a miss.
func TestWholeAndPartialRedaction(t *testing.T) {
	g := NewGen(11)
	var kind Kind
	for _, k := range Kinds {
		if k.ID == "github-pat" {
			kind = k
		}
	}
	for _, c := range Carriers {
		s := kind.Make(g)
		if !c.Fits(s) || c.ID == "base64-blob" || strings.HasPrefix(c.ID, "kubectl-") {
			continue
		}
		m, more := c.Write(g, s)
		sd := Seeded{Kind: s.Kind, Carrier: c.ID, Msg: m, Needles: needles(s, more)}
		sd.keepPresent()
		whole := rewrite(m, func(x string) string { return strings.ReplaceAll(x, s.Value, "[REDACTED:github-pat]") })
		if l := sd.Leaks(whole); len(l) > 0 {
			t.Errorf("%s: whole redaction counted as a miss: %s", c.ID, HintAll(l))
		}
		half := rewrite(m, func(x string) string { return strings.ReplaceAll(x, s.Value[:len(s.Value)/2], "[REDACTED:github-pat]") })
		if l := sd.Leaks(half); len(l) == 0 {
			t.Errorf("%s: a redaction leaving half the token counted as a catch", c.ID)
		}
	}
}

// What is left of a base64 blob is decoded: a redaction of the start of
// the blob that leaves the part holding the secret is a miss.
func TestBase64LeftIsDecoded(t *testing.T) {
	secret := "npm_" + strings.Repeat("Zq8", 12)
	blob := b64s("registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=" + secret + "\n")
	m := Msg(loom.RoleAssistant, ToolPart("base64 -w0 .npmrc", blob))
	sd := Seeded{Needles: []string{blob}, B64: []string{secret}}
	cut := rewrite(m, func(x string) string { return strings.Replace(x, blob[:24], "[REDACTED:x]", 1) })
	if l := sd.Leaks(cut); len(l) != 1 || !strings.HasPrefix(l[0], "base64 of ") {
		t.Errorf("leaks %v, want the decoded secret", l)
	}
}
