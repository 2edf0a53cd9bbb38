package secrets_test

import (
	"slices"
	"testing"

	"github.com/loomhq/loom/secrets"
)

// A remembering detector finds what the detector finds, text by text,
// whether it remembers the text or has forgotten it, and what a caller
// does with its findings changes nothing it finds later.
func TestRemembering(t *testing.T) {
	d := secrets.Default()
	r := d.Remembering(2)
	texts := []string{
		"aws key AKIAZ3MHQW7PLN5RXT4B in the dump script",
		"token ghp_4Lr9sVq2Xw8Zt6Yb1Nc3Md5Kf7Hj0Pa2Se4G and nothing else",
		"no secret here at all, only words about deploys",
		"AKIAZ3MHQW7PLN5RXT4B again, and ghp_4Lr9sVq2Xw8Zt6Yb1Nc3Md5Kf7Hj0Pa2Se4G",
	}
	for round := range 3 {
		for _, text := range texts {
			want, got := d.Find(text), r.Find(text)
			if !slices.Equal(want, got) {
				t.Fatalf("round %d, %q: remembering found %v, the detector %v", round, text, got, want)
			}
			for i := range got {
				got[i].RuleID = "changed by the caller"
			}
		}
	}
	if len(d.Find(texts[0])) == 0 || len(d.Find(texts[2])) != 0 {
		t.Fatal("the test's texts do not hold what they should")
	}
}
