package sqlite

import (
	"strings"

	"github.com/loomhq/loom/internal/sqlstore/query"
)

// wordsInName is the SQL name of wordsIn (query.Dialect.WordsIn).
const wordsInName = "loom_words_in"

// wordsIn counts the words of words (lower case, apart by
// query.WordsSep) that title or description holds as SQLite's LIKE
// '%word%' finds it: ASCII letters of any case, any other character as
// it is. A word given twice counts twice. A title search across every
// project scores every session by its words: as a sum of two LIKEs a
// word it took most of the search's time (10,000 sessions, six words:
// 120,000 calls of LIKE's pattern matcher), as one call a session a
// fraction of it.
func wordsIn(title, description, words string) int {
	title, description = lowerASCII(title), lowerASCII(description)
	n := 0
	for w := range strings.SplitSeq(words, query.WordsSep) {
		if strings.Contains(title, w) || strings.Contains(description, w) {
			n++
		}
	}
	return n
}

// lowerASCII is s with its ASCII capitals in lower case, and every other
// character as it is, as SQLite's LIKE and lower() fold them.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
