package bigfile_test

import (
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
