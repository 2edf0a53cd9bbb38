package loom_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/loomhq/loom"
)

// An id made for a time carries that time: imported sessions' ids sort
// and differ by their source's times, not by the moment of the import.
func TestNewIDAt(t *testing.T) {
	at := time.Date(2025, 9, 3, 0, 47, 19, 123e6, time.UTC)
	a, b := loom.NewIDAt(at), loom.NewIDAt(at.Add(24*time.Hour))
	if err := loom.ValidID(a); err != nil {
		t.Fatal(err)
	}
	u := uuid.MustParse(a)
	if u.Version() != 7 {
		t.Errorf("version %d, want 7", u.Version())
	}
	if sec, nsec := u.Time().UnixTime(); time.Unix(sec, nsec).UTC().UnixMilli() != at.UnixMilli() {
		t.Errorf("time %s, want %s", time.Unix(sec, nsec).UTC(), at)
	}
	if a[:8] == b[:8] || a >= b {
		t.Errorf("ids a day apart %s and %s share a prefix or sort backwards", a, b)
	}
	if loom.NewIDAt(at) == a {
		t.Error("two ids for one time are the same")
	}
	if now := loom.NewIDAt(time.Time{}); now[:8] != loom.NewID()[:8] {
		t.Errorf("zero time gives %s, want an id of now", now)
	}
}
