// Package handoff hands a loom session to another agent CLI to continue:
// the Writer each target's package (importer/claudecode, importer/codex,
// importer/opencode and the others docs/handoff.md lists) implements
// beside its importer.Format, Run, which checks the directory, picks the
// turns and writes the file, the mapping every writer shares (Entries,
// Steps, Call, Blocks), and the marker (Origin) that a
// handed-off file keeps, by which the importer brings the session back
// as a fork of the one it continues. See docs/handoff.md.
package handoff
