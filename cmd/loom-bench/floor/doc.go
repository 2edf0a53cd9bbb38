// Package floor holds the minimal programs that loom-bench -process times
// beside whole loom processes: each does what one loom command does, and
// no more, with the least a Go program needs for it (hello for loom
// version; sqlread opening the same SQLite file for the listing, the
// search and the hook's unchanged-file check; mcpserve, a stdio MCP
// server on the official Go SDK answering search_sessions from the same
// file, both with the pragmas loom reads it with). They are the floor a
// loom process is measured against. deps is hello linking the libraries
// loom links: beside loom version it shows what they cost before main.
package floor
