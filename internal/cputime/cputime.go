// Package cputime reads the CPU time a process has used, for benchmarks
// on a shared machine: their wall time counts the waits for a core, their
// CPU time what the work costs.
package cputime
