package server

import (
	"net/http"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
)

// syncRoutes mounts the hub's endpoints of sync (package hub) on mux,
// behind the API's tokens, timeout and errors. Their store is
// Config.Sync, else Store when it keeps sync records; without one they
// answer 404.
func (s *Server) syncRoutes(mux *http.ServeMux) {
	st := s.cfg.Sync
	if st == nil {
		st, _ = s.st.(loom.SyncStore)
	}
	hub.NewHandler(st, hub.Edge{
		Authorized: s.authorized,
		User:       userOf,
		Bounded:    s.bounded,
		Error:      s.writeHubError,
		TooLarge:   func(msg string) error { return codedError(eTooLarge, "%s", msg) },
		Push:       newLimiter("sync pushes running", hub.MaxPushesPerUser, hub.MaxPushes).acquire,
	}).Mount(mux)
}
