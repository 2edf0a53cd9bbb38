// Package searcheval holds a labelled set of queries over real agent
// sessions and sessions of its own, and the test that measures how well
// loom's keyword search finds their targets (hit@1, hit@5). See
// docs/search.md for the figures.
package searcheval
