package capture

import (
	"testing"
	"time"

	"github.com/loomhq/loom/capture"
	"github.com/loomhq/loom/internal/testkit/cmdtest"
)

// install starts the service and adds the hooks unless told not to, and
// takes no argument.
func TestInstallOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdInstall); !got.Start || !got.Hooks || got.Options == nil || got.Manager == nil {
		t.Errorf("loom capture install: %+v, want the service started and the hooks added", got)
	}
	if got := cmdtest.Options(t, newCmdInstall, "--no-start", "--no-hooks"); got.Start || got.Hooks {
		t.Errorf("--no-start --no-hooks: start %v, hooks %v", got.Start, got.Hooks)
	}
	cmdtest.Rejects(t, newCmdInstall, "extra")
}

// uninstall takes out the hooks install added unless --keep-hooks.
func TestUninstallOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdUninstall); !got.Hooks || got.Options == nil {
		t.Errorf("loom capture uninstall: %+v, want the hooks taken out", got)
	}
	if got := cmdtest.Options(t, newCmdUninstall, "--keep-hooks"); got.Hooks {
		t.Error("--keep-hooks: the hooks are taken out")
	}
	cmdtest.Rejects(t, newCmdUninstall, "extra")
}

// run rescans every 30s and beats every capture.DefaultInterval unless
// told otherwise, and refuses a rescan or a heartbeat too frequent.
func TestRunOptions(t *testing.T) {
	t.Parallel()
	got := cmdtest.Options(t, newCmdRun)
	if got.Rescan != 30*time.Second || got.Interval != capture.DefaultInterval || got.CreateStore == nil {
		t.Errorf("loom capture run: rescan %v, interval %v, want 30s and %v", got.Rescan, got.Interval, capture.DefaultInterval)
	}
	if got := cmdtest.Options(t, newCmdRun, "--rescan", "5m", "--interval", "100ms"); got.Rescan != 5*time.Minute || got.Interval != 100*time.Millisecond {
		t.Errorf("--rescan 5m --interval 100ms: %v, %v", got.Rescan, got.Interval)
	}
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdRun, "--rescan", "500ms"), "--rescan must be at least 1s")
	cmdtest.Refused(t, cmdtest.Rejects(t, newCmdRun, "--interval", "10ms"), "--interval must be at least 100ms")
	cmdtest.Rejects(t, newCmdRun, "extra")
}

// status takes no argument.
func TestStatusOptions(t *testing.T) {
	t.Parallel()
	if got := cmdtest.Options(t, newCmdStatus); got.Options == nil || got.ReadStore == nil {
		t.Errorf("loom capture status: %+v", got)
	}
	cmdtest.Rejects(t, newCmdStatus, "extra")
}
