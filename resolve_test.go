package loom

import (
	"encoding/json"
	"strings"
	"testing"
)

// Costs in JSON are rounded to a billionth of a dollar: no float noise.
func TestUsageJSONRoundsCost(t *testing.T) {
	var u Usage
	for _, c := range []float64{0.1, 0.2, 0.000000123456} {
		u.Add(Usage{CostUSD: c})
	}
	b, err := json.Marshal(u)
	if err != nil || !strings.Contains(string(b), `"cost_usd":0.300000123,`) {
		t.Fatalf("usage JSON = %s, %v", b, err)
	}
}

func TestTitleAndTruncate(t *testing.T) {
	if got := TitleFrom("  fix   the\tflaky test \nsecond line"); got != "fix the flaky test" {
		t.Fatalf("title = %q", got)
	}
	long := strings.Repeat("word ", 30)
	if got := TitleFrom(long); len([]rune(got)) > MaxTitle || !strings.HasSuffix(got, "…") || strings.HasSuffix(got, " …") {
		t.Fatalf("long title = %q", got)
	}
	if got := Truncate("héllo wörld", 6); got != "héllo…" {
		t.Fatalf("truncate = %q", got)
	}
}

func TestForkTitle(t *testing.T) {
	for _, tc := range []struct {
		parent string
		taken  []string
		want   string
	}{
		{"plan", nil, "plan (fork)"},
		{"plan", []string{"Plan (Fork)"}, "plan (fork 2)"},
		{"plan (fork)", []string{"plan (fork)", "plan (fork 2)"}, "plan (fork 3)"},
		{"plan (fork 7)", []string{"plan (fork)"}, "plan (fork 2)"},
		{"", nil, ""},
	} {
		if got := ForkTitle(tc.parent, tc.taken); got != tc.want {
			t.Errorf("ForkTitle(%q, %q) = %q, want %q", tc.parent, tc.taken, got, tc.want)
		}
	}
}
