package sqlstore

import (
	"slices"
	"strings"
	"testing"

	"github.com/loomhq/loom"
)

// The tiers a plain query goes through, in order, with what each
// matches: stop words dropped after the first tier, stems as prefixes,
// typo variants of the longest words only, nothing for a query of stop
// words.
func TestTiers(t *testing.T) {
	terms, err := loom.ParseQuery(`the registry of "open chats" websocket`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	got := tiers(terms, true)
	for _, tr := range got {
		names = append(names, tr.name)
	}
	if !slices.Equal(names, []string{loom.TierWordForms, loom.TierTitle, loom.TierAnyWord, loom.TierFuzzy}) {
		t.Fatalf("tiers = %v", names)
	}
	forms := got[0].terms
	if len(forms) != 3 || !forms[0].Phrase || len(forms[1].Alts) != 2 || forms[1].Alts[1].Words[0] != "registri" || !forms[1].Alts[1].Prefix {
		t.Fatalf("word forms = %+v", forms)
	}
	for _, tr := range got[1:] {
		for _, term := range tr.terms {
			if strings.Contains(strings.Join(term.Words, " "), "the") {
				t.Fatalf("tier %s keeps a stop word: %+v", tr.name, tr.terms)
			}
		}
	}
	if fuzzy := got[3].terms; len(fuzzy) != 2 || !fuzzy[0].Alts[0].Prefix || fuzzy[0].Alts[0].Words[0] != "websocket" {
		t.Fatalf("fuzzy = %+v", fuzzy)
	}
	if got := tiers(wordTerms([]string{"the", "of"}), true); len(got) != 0 {
		t.Fatalf("stop words only: %+v", got)
	}
	// A query cut to its first words skips the tiers that need every word.
	if got := tiers(cutQuery(strings.Repeat("postgres pool ", 2000)), false); len(got) == 0 || got[0].name != loom.TierTitle {
		t.Fatalf("cut query tiers = %+v", got)
	}
}

func TestEdits(t *testing.T) {
	e := Edits("websokcet")
	for _, want := range []string{"websocket", "webokcet", "websokcte"} {
		if !slices.Contains(e, want) {
			t.Errorf("Edits(websokcet) lacks %q", want)
		}
	}
	if slices.Contains(e, "websokcet") || len(e) > 3*len("websokcet") {
		t.Errorf("Edits(websokcet) = %d variants %v", len(e), e)
	}
	// A letter another spelling puts there: British for American.
	for w, want := range map[string]string{"dialyser": "dialyzer", "analyze": "analyse", "licence": "license"} {
		if e := Edits(w); !slices.Contains(e, want) || len(e) > 3*len(w) {
			t.Errorf("Edits(%s) = %v, want %s among at most %d", w, e, want, 3*len(w))
		}
	}
	if e := Edits("näive"); !slices.Contains(e, "naïve") && !slices.Contains(e, "nävie") {
		t.Errorf("Edits of a non-ASCII word = %v", e)
	}
}
