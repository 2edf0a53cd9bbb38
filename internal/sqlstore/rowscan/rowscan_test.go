package rowscan

import (
	"testing"
	"time"
)

func TestTime(t *testing.T) {
	at := time.Date(2026, 2, 3, 4, 5, 6, 789e6, time.UTC)
	for _, v := range []any{at, at.In(time.FixedZone("x", 3600)), "2026-02-03T04:05:06.789Z", []byte("2026-02-03T05:05:06.789+01:00")} {
		var tm Time
		if err := tm.Scan(v); err != nil || !tm.Valid || !tm.T.Equal(at) || tm.T.Location() != time.UTC || tm.Ptr() == nil {
			t.Errorf("scan %T %v = %+v, %v", v, v, tm, err)
		}
	}
	var tm Time
	if err := tm.Scan(nil); err != nil || tm.Valid || tm.Ptr() != nil {
		t.Errorf("NULL = %+v, %v", tm, err)
	}
	if err := tm.Scan("written by hand"); err != nil || !tm.Valid || !tm.T.IsZero() {
		t.Errorf("text that is no time = %+v, %v", tm, err)
	}
	if err := tm.Scan(42); err == nil {
		t.Error("an integer scanned as a time")
	}
}

func TestBytes(t *testing.T) {
	buf := []byte(`{"a":1}`)
	var b Bytes
	if err := b.Scan(buf); err != nil || !b.Valid || string(b.B) != `{"a":1}` {
		t.Fatalf("bytes = %+v, %v", b, err)
	}
	buf[0] = 'X'
	if b.B[0] != '{' {
		t.Fatal("Bytes kept the driver's buffer")
	}
	if err := b.Scan("text"); err != nil || string(b.B) != "text" {
		t.Fatalf("text = %+v, %v", b, err)
	}
	if err := b.Scan(nil); err != nil || b.Valid {
		t.Fatalf("NULL = %+v, %v", b, err)
	}
}
