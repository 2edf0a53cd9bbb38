package usage_test

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/loomhq/loom/internal/testkit/clitest"
)

// The usage roll-up is only ever behind, never wrong: reports run while
// another process imports, some killed (kill -9) as they write the
// roll-up, and then one more gives what summing the messages gives.
func TestUsageRollupSurvivesImportsAndKills(t *testing.T) {
	t.Parallel()
	if clitest.OnPostgres() {
		t.Skip("the kill comes when the SQLite file grows; PostgreSQL's catch-up is one transaction too")
	}
	fx := clitest.NewEmptyFixture(t)
	fx.MustExec(t, "session", "import", "--from", "claude-code", clitest.ClaudeCorpus(t, "a", 6))
	// A second import runs while the reports do.
	imp := exec.Command(clitest.LoomBinary(t), "session", "import", "--from", "claude-code", clitest.ClaudeCorpus(t, "b", 6))
	imp.Dir, imp.Env = fx.Project, fx.BinEnv()
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- imp.Wait() }()
	reports, kills := 0, 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the import beside the reports: %v", err)
			}
			running = false
		default:
		}
		cmd := exec.Command(clitest.LoomBinary(t), "usage", "daily", "--json", "--tz", "UTC")
		cmd.Dir, cmd.Env = fx.Project, fx.BinEnv()
		// Every other report is killed once the store grows.
		if reports%2 == 0 {
			if clitest.KillWhenGrown(t, cmd, fx.DB, 0) {
				kills++
			}
		} else if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("usage daily beside an import: %v\n%s", err, out)
		}
		reports++
	}
	t.Logf("%d reports beside the import, %d killed as the store grew", reports, kills)
	type report struct {
		Rows  json.RawMessage `json:"rows"`
		Total json.RawMessage `json:"total"`
	}
	var quick, summed report
	if err := json.Unmarshal([]byte(fx.MustExec(t, "usage", "daily", "--json", "--tz", "UTC")), &quick); err != nil {
		t.Fatal(err)
	}
	// A bound off the quarter hours is answered from the messages.
	if err := json.Unmarshal([]byte(fx.MustExec(t, "usage", "daily", "--json", "--tz", "UTC", "--since", "1970-01-01T00:00:00.001Z")), &summed); err != nil {
		t.Fatal(err)
	}
	if string(quick.Rows) != string(summed.Rows) || string(quick.Total) != string(summed.Total) {
		t.Fatalf("the roll-up's report:\n%s\n%s\nsummed from the messages:\n%s\n%s", quick.Rows, quick.Total, summed.Rows, summed.Total)
	}
	if len(quick.Rows) < 10 {
		t.Fatalf("the report holds no usage: %s", quick.Rows)
	}
}
