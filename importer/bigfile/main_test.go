package bigfile_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// The test binary, run with $spawnEnv set to a command (a JSON list of
// its arguments), runs that command and writes its peak resident memory
// in bytes to the file $rssEnv names (see home.run).
const (
	spawnEnv = "LOOM_BIGFILE_SPAWN"
	rssEnv   = "LOOM_BIGFILE_RSS"
)

func TestMain(m *testing.M) {
	if argv := os.Getenv(spawnEnv); argv != "" {
		os.Exit(spawn(argv))
	}
	clitest.Main(m)
}

// spawn runs the command argv, a JSON list, and returns its exit status.
func spawn(argv string) int {
	var args []string
	if err := json.Unmarshal([]byte(argv), &args); err != nil || len(args) == 0 {
		os.Stderr.WriteString("bad " + spawnEnv + "\n")
		return 2
	}
	out := os.Getenv(rssEnv)
	os.Unsetenv(spawnEnv)
	os.Unsetenv(rssEnv)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		os.Stderr.WriteString(err.Error() + "\n")
		return 2
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && out != "" {
		if err := os.WriteFile(out, []byte(strconv.FormatInt(ru.Maxrss<<10, 10)), 0o600); err != nil {
			return 2
		}
	}
	return cmd.ProcessState.ExitCode()
}
