package server

import (
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
)

// syncRoutes mounts the hub's endpoints of sync (package hub) on mux,
// behind the API's tokens, timeout and errors. Their store is
// Config.Sync, else Store when it keeps sync records; without one they
// answer 404.
func (s *Server) syncRoutes(mux *router) {
	st := s.cfg.Sync
	if st == nil {
		st, _ = s.st.(loom.SyncStore)
	}
	// A push's place is free again within a second or so, the time to
	// store a batch: a machine refused comes back after one.
	pushes := newLimiter("sync pushes running", hub.MaxPushesPerUser, hub.MaxPushes)
	pushes.after = time.Second
	hub.NewHandler(st, hub.Edge{
		Authorized: s.authorized,
		User:       userOf,
		Bounded:    s.bounded,
		Error:      s.writeHubError,
		TooLarge:   func(msg string) error { return codedError(eTooLarge, "%s", msg) },
		Push:       pushes.acquire,
	}).Mount(mux)
}
