package human

import (
	"strings"
	"testing"
	"time"
)

// An age too long for a time.Duration is read as the longest one, never
// as a negative or small age: "--older-than 999999999999d" must not
// mean "older than some time in the future" (every session).
func TestParseAgeNeverWraps(t *testing.T) {
	for _, s := range []string{"999999999999d", "200000d200000d", "106752d", "15251w", strings.Repeat("9", 400) + "s", "1" + strings.Repeat("0", 30) + "w1s"} {
		d, err := ParseAge(s)
		if err != nil || d != MaxAge {
			t.Errorf("ParseAge(%q) = %v, %v; want MaxAge", s, d, err)
		}
	}
	for s, want := range map[string]time.Duration{
		"106751d":  106751 * 24 * time.Hour,
		"30d":      30 * 24 * time.Hour,
		"1d12h":    36 * time.Hour,
		"1.5h":     90 * time.Minute,
		"0s":       0,
		"2w":       14 * 24 * time.Hour,
		" 7d ":     7 * 24 * time.Hour,
		"1000000s": 1000000 * time.Second,
	} {
		if d, err := ParseAge(s); err != nil || d != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", s, d, err, want)
		}
	}
	for _, s := range []string{"", "d", "-1d", "1y", "1e9d", "..d", "7"} {
		if d, err := ParseAge(s); err == nil {
			t.Errorf("ParseAge(%q) = %v, want an error", s, d)
		}
	}
}

// FuzzParseAge: whatever it is given, ParseAge answers an age from 0 to
// MaxAge or a one-line error, and never panics.
func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"30d", "1d12h", "999999999999d", "1.5h", "0s", "200000d200000d", "7", "1e9d", ".5w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAge(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseAge(%q): a message of several lines: %q", s, err)
			}
			return
		}
		if d < 0 || d > MaxAge {
			t.Fatalf("ParseAge(%q) = %v", s, d)
		}
	})
}
