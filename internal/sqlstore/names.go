package sqlstore

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom"
)

// A question names what it is about ("What is Nate's favorite genre of
// movies?", "did the Elixir style checker flag anything?"), and the
// message that answers it seldom says the name again: the conversation
// it is in does, as its speaker's name or its subject. So the some-words
// tier of a search across projects (weighNames), which ranks sessions
// (bySession), weighs a session that holds
// one of the question's names anywhere by that name's weight (IDF), once
// for the session: a message about films in Nate's conversation comes
// before one in a conversation that never names him. Messages of one
// session keep their order; the session that names the subject comes
// first among those that say its other words equally.
const (
	// NameDepth is how many messages of the whole store may hold a name
	// for it to be weighed: one in more tells few sessions apart, and
	// finding its sessions would read all of them.
	NameDepth = 5000
	// maxNames is how many of a question's names are weighed, the first.
	maxNames = 3
	// halfShare is the share of a session's messages that must hold a
	// name for the session to weigh half of the name's weight: a
	// session weighs w·s/(s+halfShare) for a name of weight w held by a
	// share s of its messages, saturating as bm25 does with a word said
	// often. A name said in a message of each turn (a speaker's) weighs
	// most of its weight; one said once in a long session (a tool named
	// in passing in a day of work) little.
	halfShare = 0.1
)

// Namer is an engine's part in weighing a question's names.
type Namer interface {
	// IndexSize is how many message bodies the engine's full-text
	// index holds at most.
	IndexSize(ctx context.Context) (int64, error)
	// NamedSessions returns how many messages of the whole store hold
	// name (a one-word term), counted to depth+1, and, when that is at
	// most depth, the sessions that pass q's filters and hold it; the
	// count may be left 0 when no session is returned.
	NamedSessions(ctx context.Context, q loom.SearchQuery, name loom.Term, depth int) (int64, []Share, error)
	// NameRank is what the engine's score gives a word said once in a
	// message of common length, per unit of its inverse document
	// frequency.
	NameRank() float64
}

// Share is a session that holds a name and the share of its messages
// that do.
type Share struct {
	Session string
	Share   float64
}

// Names are the words of text written with a capital letter but the
// first of each sentence ("Nate" and "Elixir" above), in lower case,
// each once and without a possessive's "'s", at most maxNames of them:
// the names of people, places, projects and tools a question asks
// about. A stop word ("I") is not a name.
func Names(text string) []string {
	var out []string
	start := true
	for _, f := range strings.Fields(text) {
		first := start
		r, _ := utf8.DecodeLastRuneInString(f)
		start = r == '.' || r == '!' || r == '?'
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		c, _ := utf8.DecodeRuneInString(w)
		if first || !unicode.IsUpper(c) {
			continue
		}
		w = strings.ToLower(w)
		if utf8.RuneCountInString(w) < 2 || english.IsStopWord(w) || slices.Contains(out, w) {
			continue
		}
		if out = append(out, w); len(out) == maxNames {
			break
		}
	}
	return out
}

// nameWeights returns, for each session that passes q's filters and
// holds one of names, the sum of those names' weights: a name held by n
// of the store's messages weighs what a message scores for saying it
// once (its IDF times the engine's NameRank), none when n is more than
// NameDepth; a session weighs the share of it that halfShare gives.
func nameWeights(ctx context.Context, e Namer, q loom.SearchQuery, names []string) (map[string]float64, error) {
	out := map[string]float64{}
	var total int64
	for _, name := range names {
		n, sessions, err := e.NamedSessions(ctx, q, loom.Term{Words: []string{name}}, NameDepth)
		if err != nil {
			return nil, err
		}
		if n > NameDepth || len(sessions) == 0 {
			continue
		}
		if total == 0 {
			if total, err = e.IndexSize(ctx); err != nil {
				return nil, err
			}
		}
		w := IDF(total, n) * e.NameRank()
		for _, s := range sessions {
			out[s.Session] += w * s.Share / (s.Share + halfShare)
		}
	}
	return out, nil
}
