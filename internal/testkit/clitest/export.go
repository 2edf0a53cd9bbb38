package clitest

import (
	"encoding/json"
)

func Itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
