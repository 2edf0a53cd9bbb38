package report

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A report in the machine's zone names it as the user knows it, not as
// Go's "Local".
func TestZoneName(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no zone database:", err)
	}
	if got := ZoneName(berlin); got != "Europe/Berlin" {
		t.Errorf("ZoneName(Europe/Berlin) = %q", got)
	}
	t.Setenv("TZ", "America/New_York")
	if got := ZoneName(time.Local); got != "America/New_York" {
		t.Errorf("ZoneName(Local) with TZ set = %q", got)
	}
	t.Setenv("TZ", "")
	if target, err := os.Readlink("/etc/localtime"); err == nil && strings.Contains(target, "zoneinfo/") {
		if got := ZoneName(time.Local); got == "Local" || !strings.HasSuffix(target, got) {
			t.Errorf("ZoneName(Local) = %q, /etc/localtime links to %s", got, target)
		}
	}
}
