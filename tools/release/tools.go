//go:build tools

// Package release pins the release tool (GoReleaser) in a module of its
// own, so that the main module's go.mod does not carry its dependencies.
package release

import _ "github.com/goreleaser/goreleaser/v2"
