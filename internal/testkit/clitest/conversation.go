package clitest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// PostTurn sends one turn to the server with token and returns its
// session's id.
func PostTurn(t *testing.T, sv *serving, token, key, text string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"key": key, "text": text})
	req, _ := http.NewRequest("POST", sv.Base+"/api/v1/messages", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "event: done") {
		t.Fatalf("turn: %d %s", resp.StatusCode, b)
	}
	var start struct {
		SessionID string `json:"session_id"`
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && start.SessionID == "" {
			json.Unmarshal([]byte(data), &start)
		}
	}
	return start.SessionID
}
