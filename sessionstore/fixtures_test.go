package sessionstore

import (
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// Hosts of the tests, in the order their ids sort.
const (
	hostA synclog.HostID = "0196a3b2-0000-4000-8000-00000000000a"
	hostB synclog.HostID = "0196a3b2-0000-4000-8000-00000000000b"
	hostC synclog.HostID = "0196a3b2-0000-4000-8000-00000000000c"
)

const (
	sessionID = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c0d"
	forkID    = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c0e"
	childID   = "0196a3b2-1c4e-7d3f-9a2b-5e6f7a8b9c10"
	keyID     = "98bd7169152fea6f"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// stampAt returns host h's stamp ms milliseconds after t0.
func stampAt(ms int, h synclog.HostID) synclog.Stamp {
	return synclog.Stamp{HLC: synclog.NewHLC(t0.Add(time.Duration(ms)*time.Millisecond), 0), Host: h}
}

// row returns the row of session id as a record creates it, with every
// field Meta merges set but the title, description and archive.
func row(id string) *loom.Session {
	return &loom.Session{ID: id, Key: "cli:loom", Cwd: "/home/ana/src/loom", Model: "gpt-5-mini", Provider: "openai",
		Profile: "default", GitBranch: "main", Project: loom.Project{ID: "4f1d2c3b4a596877", Name: "loom", Root: "/home/ana/src/loom"}}
}
