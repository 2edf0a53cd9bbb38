package blame

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// notebook is an .ipynb file of code cells with sources, as Jupyter
// writes one (each line of a source a string of its list, the last
// without its line end, indented by one space a level).
func notebook(t *testing.T, sources ...string) string {
	t.Helper()
	type cell struct {
		CellType string         `json:"cell_type"`
		ID       string         `json:"id"`
		Metadata map[string]any `json:"metadata"`
		Source   []string       `json:"source"`
	}
	nb := struct {
		Cells         []cell         `json:"cells"`
		Metadata      map[string]any `json:"metadata"`
		NBFormat      int            `json:"nbformat"`
		NBFormatMinor int            `json:"nbformat_minor"`
	}{Metadata: map[string]any{}, NBFormat: 4, NBFormatMinor: 5}
	for i, s := range sources {
		c := cell{CellType: "code", ID: "cell" + string(rune('a'+i)), Metadata: map[string]any{}}
		lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
		for _, l := range lines {
			if l != "" {
				c.Source = append(c.Source, l)
			}
		}
		nb.Cells = append(nb.Cells, c)
	}
	b, err := json.MarshalIndent(nb, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestBlameNotebookEdit: Claude Code's NotebookEdit of an .ipynb (a
// cell inserted, a cell replaced, a cell deleted): the sources' lines
// it wrote are its own, as the notebook's JSON holds them; a human's
// cell is the human's.
func TestBlameNotebookEdit(t *testing.T) {
	r := newRepo(t)
	human := "import pandas as pd\nframe = pd.read_csv('measurements.csv')\n"
	old := "frame.describe()\nprint('old summary of the measurements')\n"
	gone := "print('a cell the agent deletes from the notebook')\n"
	r.write("analysis.ipynb", notebook(t, human, old, gone))
	r.commit("notebook")
	path := filepath.Join(r.dir, "analysis.ipynb")
	inserted := "totals = frame.groupby('station').sum()\ntotals.plot(kind='bar', title='Totals by station')\n"
	r.agent("s1", "claude-code", "NotebookEdit", map[string]any{"notebook_path": path, "cell_id": "cella", "new_source": strings.TrimSuffix(inserted, "\n"), "cell_type": "code", "edit_mode": "insert"},
		func() { r.write("analysis.ipynb", notebook(t, human, inserted, old, gone)) })
	replaced := "summary = frame.describe(include='all')\nsummary.to_markdown('summary_of_measurements.md')\n"
	r.agent("s1", "claude-code", "NotebookEdit", map[string]any{"notebook_path": path, "cell_id": "cellb", "new_source": strings.TrimSuffix(replaced, "\n"), "edit_mode": "replace"},
		func() { r.write("analysis.ipynb", notebook(t, human, inserted, replaced, gone)) })
	r.agent("s1", "claude-code", "NotebookEdit", map[string]any{"notebook_path": path, "cell_id": "celld", "new_source": "", "edit_mode": "delete"},
		func() { r.write("analysis.ipynb", notebook(t, human, inserted, replaced)) })
	r.commit("totals")
	res := r.blame("analysis.ipynb")
	r.want(res, map[string]string{
		"totals = frame.groupby": "agent:s1", "totals.plot": "agent:s1",
		"summary = frame.describe": "agent:s1", "summary.to_markdown": "agent:s1",
		"import pandas": "human", "pd.read_csv": "human",
	})
	if len(res.Notes) != 0 {
		t.Errorf("notes: %q", res.Notes)
	}
}
