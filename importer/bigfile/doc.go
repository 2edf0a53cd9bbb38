// Package bigfile holds the tests of importing session files far bigger
// than a segment (importer/segment.go) with the loom binary: its memory
// stays bounded whatever the file's size, and a kill -9 in the middle of
// an import loses nothing. Run with LOOM_BIG_MB=N to measure one import,
// follow and reimport of a generated Claude Code file of N MB with the
// default segment size (docs/performance.md).
package bigfile
