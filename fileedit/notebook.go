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
// notebook holds it, each line a string of the cell's "source" list
// (the line end escaped, a comma after all but the last), as Jupyter
// and Claude Code write it, or the whole source one string. A cell
// deleted puts in no line.
func fromNotebookEdit(raw json.RawMessage) []Change {
	var in struct {
		Path     string  `json:"notebook_path"`
		Source   *string `json:"new_source"`
		EditMode string  `json:"edit_mode"`
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
	c.Replace = []Replacement{{New: strings.Join(list, "\n")}, {New: `"source": ` + jsonString(src)}}
	return []Change{c}
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
