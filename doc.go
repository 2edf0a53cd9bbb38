// Package loom holds the domain of loom: durable, searchable, resumable
// conversation sessions for AI agents.
//
// The root package defines the types (Session, Message, Part, Usage), the
// Store interface every storage engine implements, and the error codes that
// each edge (command line, HTTP) translates once. It imports no engine:
// the sqlite and postgres packages implement Store, and cmd/loom wires them.
package loom
