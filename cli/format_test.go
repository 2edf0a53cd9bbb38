package cli_test

import (
	"testing"
	"time"

	"github.com/loomhq/loom/internal/human"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"30d", 30 * 24 * time.Hour},
		{"12h", 12 * time.Hour},
		{"2w", 14 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"90m", 90 * time.Minute},
		{"1.5h", 90 * time.Minute},
	}
	for _, tc := range tests {
		if got, err := human.ParseAge(tc.in); err != nil || got != tc.want {
			t.Errorf("human.ParseAge(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "d", "30", "30x", "-1d", "1d 2h"} {
		if _, err := human.ParseAge(bad); err == nil {
			t.Errorf("human.ParseAge(%q) accepted", bad)
		}
	}
}
