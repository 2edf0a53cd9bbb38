package main

import (
	"encoding/json"

	"github.com/loomhq/loom"
)

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func jsonParts(m *loom.Message) (string, error) {
	b, err := json.Marshal(m.Parts)
	return string(b), err
}
