package server

import (
	"github.com/loomhq/loom/hub"
)

// teamRoutes mounts the hub's team endpoints (package hub, TeamHandler)
// on mux, behind the API's tokens, timeout and errors. Their store is
// the server's store when it keeps teams (PostgreSQL); otherwise they
// answer that teams need a hub on PostgreSQL.
func (s *Server) teamRoutes(mux *router) {
	st := s.svc.TeamHub
	pushes := newPushLimit("team pushes running", "team", hub.MaxPushesPerUser, hub.MaxPushes, s.hubLocks())
	hub.NewTeamHandler(st, hub.Edge{
		Authorized: s.authorized,
		User:       userOf,
		Bounded:    s.bounded,
		Error:      s.writeHubError,
		TooLarge:   func(msg string) error { return codedError(eTooLarge, "%s", msg) },
		Forbidden:  func(msg string) error { return codedError(eForbidden, "%s", msg) },
		TooMany:    func(msg string) error { return codedError(eTooMany, "%s", msg) },
		Push:       pushes.acquire,
	}).Mount(mux)
}
