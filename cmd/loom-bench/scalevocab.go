package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"

	"github.com/loomhq/loom/internal/sqlstore"
)

// fillerVocabulary is the words of the session files under samples
// (real agents' sessions), most frequent first, less every word that a
// search for a content word of a planted conversation or question could
// match: that word itself and its other forms (irregular verbs), any
// word of the same Porter2 stem, and any word that starts with the
// word, with its stem (the word-forms tier) or with one of its typo
// variants (the fuzzy tier: a letter dropped, two neighbours swapped,
// s, z, c or k changed) when the word has four letters or more. Stop
// words are kept: every real store is full of them, and the questions
// hold them too. Words are lower-case a–z of 3 to 14 letters seen at
// least twice.
func fillerVocabulary(samples string, sets []*retrievalSet) ([]string, error) {
	stems, prefixes := map[string]bool{}, map[string]bool{}
	plant := func(text string) {
		for _, w := range letterWords(text) {
			if english.IsStopWord(w) {
				continue
			}
			for _, f := range append(sqlstore.IrregularForms(w), w) {
				stems[sqlstore.Stem(f)] = true
				if len(f) >= 4 {
					prefixes[f] = true
					if s := sqlstore.Stem(f); len(s) >= 4 {
						prefixes[s] = true
					}
					for _, v := range typoVariants(f) {
						prefixes[v] = true
					}
				}
			}
		}
	}
	for _, set := range sets {
		for _, c := range set.convs {
			for _, s := range c.sessions {
				for _, t := range s.turns {
					plant(t.text)
				}
			}
		}
		for _, q := range set.qs {
			plant(q.text)
		}
	}
	counts := map[string]int{}
	err := filepath.WalkDir(samples, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := readDataFile(path)
		if err != nil {
			return err
		}
		for _, w := range letterWords(string(b)) {
			if len(w) >= 3 && len(w) <= 14 && isASCIILetters(w) {
				counts[w]++
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the filler's vocabulary: %w", err)
	}
	excluded := func(w string) bool {
		if english.IsStopWord(w) {
			return false
		}
		if stems[sqlstore.Stem(w)] {
			return true
		}
		for i := 3; i <= len(w); i++ {
			if prefixes[w[:i]] {
				return true
			}
		}
		return false
	}
	var vocab []string
	for w, n := range counts {
		if n >= 2 && !excluded(w) {
			vocab = append(vocab, w)
		}
	}
	slices.SortFunc(vocab, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	if len(vocab) < 100 {
		return nil, fmt.Errorf("the filler's vocabulary: only %d words in %s", len(vocab), samples)
	}
	return vocab, nil
}

// letterWords are the runs of letters of s, in lower case.
func letterWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) })
}

func isASCIILetters(w string) bool {
	for i := range len(w) {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// typoVariants are the words the fuzzy tier looks up for w: a letter
// dropped, two neighbouring letters swapped, and s, z, c or k changed
// for the letter another spelling puts there.
func typoVariants(w string) []string {
	var out []string
	for i := range len(w) {
		out = append(out, w[:i]+w[i+1:])
		if i+1 < len(w) {
			out = append(out, w[:i]+string(w[i+1])+string(w[i])+w[i+2:])
		}
		for _, r := range map[byte]string{'s': "zc", 'z': "s", 'c': "sk", 'k': "c"}[w[i]] {
			out = append(out, w[:i]+string(r)+w[i+1:])
		}
	}
	return out
}
