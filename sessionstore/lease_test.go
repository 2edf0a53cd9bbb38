package sessionstore

import (
	"testing"
	"time"

	"github.com/loomhq/loom"
)

func TestHolder(t *testing.T) {
	now := time.Now()
	h := Holder{Owner: "me", PID: 1, Host: "here"}
	alive := func(pid int) bool { return pid == 42 }
	for _, tc := range []struct {
		name    string
		l       loom.Lock
		foreign bool
	}{
		{"own lock", loom.Lock{Owner: "me", Host: "here"}, false},
		{"live process on this host", loom.Lock{Owner: "o", Host: "here", PID: 42}, true},
		{"dead process on this host", loom.Lock{Owner: "o", Host: "here", PID: 7, Expires: now.Add(time.Hour)}, false},
		{"lease from another host", loom.Lock{Owner: "o", Host: "there", Expires: now.Add(time.Second)}, true},
		{"expired lease", loom.Lock{Owner: "o", Host: "there", Expires: now.Add(-time.Second)}, false},
	} {
		if got := h.Foreign(&tc.l, now, alive) != nil; got != tc.foreign {
			t.Errorf("%s: foreign = %v", tc.name, got)
		}
	}
}
