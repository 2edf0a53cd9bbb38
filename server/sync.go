package server

import (
	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
)

// syncRoutes mounts the hub's endpoints of sync (package hub) on mux,
// behind the API's tokens, timeout and errors. Their store is the
// store's sync service; without one they answer 404.
func (s *Server) syncRoutes(mux *router) {
	st := s.svc.Sync
	pushes := newPushLimit("sync pushes running", "sync", hub.MaxPushesPerUser, hub.MaxPushes, s.hubLocks())
	hub.NewHandler(st, hub.Edge{
		Authorized: s.authorized,
		User:       userOf,
		Bounded:    s.bounded,
		Error:      s.writeHubError,
		TooLarge:   func(msg string) error { return codedError(eTooLarge, "%s", msg) },
		Push:       pushes.acquire,
		Locks:      s.hubLocks(),
	}).Mount(mux)
}

// hubLocks returns the locks of the hub's store when its processes share
// it (PostgreSQL), nil otherwise.
func (s *Server) hubLocks() loom.HubLocks { return s.svc.HubLocks }
