// Package testkit holds, in its subpackages, what only loom's tests use:
// the command tests' harness (clitest, cmdtest), the suites every engine
// runs (storetest, synctest), the real agent programs installed for tests
// (agentclitest), a pseudo-terminal (termtest), fakes of the file system
// and of git (fsfault, gittest), one small fake per service of package
// loom (fake), a buffer safe to read while written (syncio), the
// search evaluation (searcheval), a generated test's seed (seedtest)
// and what the engines' plan tests share
// (plantest). No file of the program imports them
// (TestOnlyTestsImportTheKit).
package testkit
