// Package handoff hands a loom session to another agent CLI to continue:
// the Writer each tool's package (importer/claudecode, importer/codex,
// importer/gemini) implements beside its importer.Format, Run, which
// checks the directory, picks the turns and writes the file, the mapping
// every writer shares (Entries), and the marker (Origin) that a
// handed-off file keeps, by which the importer brings the session back
// as a fork of the one it continues. See docs/handoff.md.
package handoff
