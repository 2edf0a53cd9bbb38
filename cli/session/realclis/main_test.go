// Package realclis_test runs `loom session` against the real agent
// programs (installed from npm by internal/testkit/agentclitest), each against a
// local fake model: import of what they write, hand-off to them and
// restore-to. They are apart from the other session tests so that the two
// packages run side by side.
package realclis_test

import (
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
