package server

import (
	"context"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
)

// hubRoutes mounts the hub's endpoints (package hub) on mux, behind the
// API's tokens, timeout and errors: each user's own records (sync), each
// team's records and chain, one handler for the records of both. A
// user's own records are the store's sync service, without which they
// answer 404; teams are the store's when it keeps them (PostgreSQL),
// and answer that teams need a hub on PostgreSQL otherwise.
func (s *Server) hubRoutes(mux *router) {
	// A user's pushes to their own space and to teams' are counted
	// apart, each within the same limits.
	pushes := map[string]*pushLimit{
		"sync": newPushLimit("sync pushes running", "sync", hub.MaxPushesPerUser, hub.MaxPushes, s.hubLocks()),
		"team": newPushLimit("team pushes running", "team", hub.MaxPushesPerUser, hub.MaxPushes, s.hubLocks()),
	}
	hub.NewHandler(s.st, s.svc.TeamHub, hub.Edge{
		Authorized: s.authorized,
		User:       userOf,
		Bounded:    s.bounded,
		Error:      s.writeHubError,
		TooLarge:   func(msg string) error { return codedError(eTooLarge, "%s", msg) },
		Forbidden:  func(msg string) error { return codedError(eForbidden, "%s", msg) },
		TooMany:    func(msg string) error { return codedError(eTooMany, "%s", msg) },
		Push: func(ctx context.Context, scope, user string) (func(), error) {
			return pushes[scope].acquire(ctx, user)
		},
		Locks:         s.hubLocks(),
		CheckpointKey: s.cfg.HubKey,
		Checkpoints:   s.svc.TeamCheckpoints,
		Logger:        s.log,
	}).Mount(mux)
}

// hubLocks returns the locks of the hub's store when its processes share
// it (PostgreSQL), nil otherwise.
func (s *Server) hubLocks() loom.HubLocks { return s.svc.HubLocks }
