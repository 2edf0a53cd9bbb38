package sqlstore

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
)

// A question's names are its words written with a capital letter, but
// a sentence's first word and stop words; each once, without "'s", at
// most maxNames.
func TestNames(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"What is Nate's favorite genre of movies?", []string{"nate"}},
		{"did the Elixir style checker flag anything?", []string{"elixir"}},
		{"Where, besides the United States, has Elise visited?", []string{"united", "states", "elise"}},
		{"Nate won. Then I asked Joanna’s brother about Nate", []string{"joanna", "nate"}},
		{"Which of James's family members have visited him?", []string{"james"}},
		{"Did Jon, Gina, Maria and Tim meet John?", []string{"jon", "gina", "maria"}},
		{"how does the JSON hook output look? A lot of HTML", []string{"json", "html"}},
		{"which port does the spotter server use", nil},
		{"", nil},
	} {
		if got := Names(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Names(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// A session that holds a name comes before a session whose hits score
// up to the name's weight more, never before its own better hits, and
// the name's weight is not spread over its other hits.
func TestBySessionNamed(t *testing.T) {
	at := time.Date(2023, 6, 3, 0, 0, 0, 0, time.UTC)
	h := func(s, id string, score float64) loom.SearchHit {
		return loom.SearchHit{SessionID: s, MessageID: id, Score: score, CreatedAt: at}
	}
	hits := []loom.SearchHit{h("kevin", "k1", 7.5), h("nate", "n1", 5.8), h("nate", "n2", 0.7), h("other", "x1", 7)}
	order := func(named map[string]float64) []string {
		var ids []string
		for _, x := range bySession(slices.Clone(hits), nil, named) {
			ids = append(ids, x.MessageID)
		}
		return ids
	}
	if got, want := order(nil), []string{"k1", "x1", "n1", "n2"}; !slices.Equal(got, want) {
		t.Errorf("no names: %v, want %v", got, want)
	}
	if got, want := order(map[string]float64{"nate": 3}), []string{"n1", "k1", "x1", "n2"}; !slices.Equal(got, want) {
		t.Errorf("named Nate: %v, want %v", got, want)
	}
	// Weighed less than what parts the sessions' best hits.
	if got, want := order(map[string]float64{"nate": 0.5}), []string{"k1", "x1", "n1", "n2"}; !slices.Equal(got, want) {
		t.Errorf("a light name: %v, want %v", got, want)
	}
}

// Whatever the text, its names are at most maxNames distinct lower-case
// words of two letters or more, none a stop word.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"What is Nate's favorite genre of movies?", "A. B. C.", "Ünïcode Ärger’s", "\xff\xfe Bad UTF-8", "x ÉÉ 's 's"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		names := Names(text)
		if len(names) > maxNames {
			t.Fatalf("%d names", len(names))
		}
		for i, n := range names {
			if n != strings.ToLower(n) || utf8.RuneCountInString(n) < 2 || english.IsStopWord(n) || slices.Contains(names[:i], n) {
				t.Fatalf("Names(%q) = %q", text, names)
			}
		}
	})
}
