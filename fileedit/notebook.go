package fileedit

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/loomhq/loom"
)

// fromNotebookEdit reads a call of Claude Code's NotebookEdit: a cell
// of a Jupyter notebook replaced, inserted or deleted. The notebook is
// JSON: the lines the call put in the file are its source as the
// notebook holds it, as Claude Code writes it (the whole source one
// string, "source": "…", with a comma after it when other keys follow)
// or as Jupyter writes it (each line a string of the cell's "source"
// list, the line end escaped, a comma after all but the last). A cell
// inserted is the lines Claude Code writes of it: its type after the
// cell before it, then its source, metadata, execution count and
// outputs; and its id, which Claude Code makes at random, as the
// call's result names it (meta, Claude Code's toolUseResult as the
// importer keeps it: {"toolUseResult": {"cell_id": …}}). A cell
// deleted puts in no line.
func fromNotebookEdit(raw, meta json.RawMessage) []Change {
	var in struct {
		Path     string  `json:"notebook_path"`
		Source   *string `json:"new_source"`
		CellType string  `json:"cell_type"`
		EditMode string  `json:"edit_mode"`
		After    string  `json:"cell_id"`
	}
	if json.Unmarshal(raw, &in) != nil || in.Path == "" {
		return nil
	}
	c := Change{Op: loom.EditChange, Path: in.Path}
	if in.EditMode == "delete" || in.Source == nil || *in.Source == "" {
		return []Change{c}
	}
	src := *in.Source
	var list []string
	parts := strings.SplitAfter(src, "\n")
	for i, l := range parts {
		if l == "" {
			continue
		}
		s := jsonString(l)
		if i < len(parts)-1 && parts[i+1] != "" {
			s += ","
		}
		list = append(list, s)
	}
	one := `"source": ` + jsonString(src)
	c.Replace = []Replacement{{New: strings.Join(list, "\n")}, {New: one}}
	if in.EditMode != "insert" {
		c.Replace = append(c.Replace, Replacement{New: one + ","})
	} else {
		kind := in.CellType
		if kind == "" {
			kind = "code"
		}
		rest := []string{one + ",", `"metadata": {},`, `"execution_count": null,`, `"outputs": []`}
		if kind != "code" {
			rest = []string{one + ",", `"metadata": {}`}
		}
		c.Replace = append(c.Replace, Replacement{New: "},\n{\n\"cell_type\": " + jsonString(kind) + ","}, Replacement{New: strings.Join(rest, "\n")})
		if id := insertedCell(meta); id != "" && id != in.After {
			c.Replace = append(c.Replace, Replacement{New: `"id": ` + jsonString(id) + ","})
		}
	}
	return []Change{c}
}

// insertedCell is the id of the cell a NotebookEdit inserted, as its
// result names it, "" when it does not.
func insertedCell(meta json.RawMessage) string {
	var m struct {
		Result struct {
			CellID   string `json:"cell_id"`
			EditMode string `json:"edit_mode"`
		} `json:"toolUseResult"`
	}
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil || m.Result.EditMode != "insert" {
		return ""
	}
	return m.Result.CellID
}

// jsonString is s as a JSON string, <, > and & as they are (as
// Jupyter's and Claude Code's JSON writers leave them).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
