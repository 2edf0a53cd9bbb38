//go:build tools

// Package sbom pins the tool that writes the release's software bills of
// materials (cyclonedx-gomod) in a module of its own, so that neither the
// main module's go.mod nor GoReleaser's carries its dependencies.
package sbom

import _ "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"
