// Package clitest is what the tests of loom's command line share: a
// LOOM_HOME with a populated store (Fixture), loom run in process
// through cli.Main or as the built binary, the engines under test
// (SQLite, or PostgreSQL with LOOM_TEST_POSTGRES), fake providers and
// hubs, the real agent CLIs' runs, and the peak-memory wrapper. Every
// package whose tests use it makes Main its TestMain.
package clitest
