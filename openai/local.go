package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// DefaultLocalURL is where a local OpenAI-compatible server usually
// listens (Ollama).
const DefaultLocalURL = "http://127.0.0.1:11434/v1"

// LocalURL is where to look for a local OpenAI-compatible server:
// Ollama's own setting OLLAMA_HOST (host:port or a URL) as env reports
// it, else url, else DefaultLocalURL.
func LocalURL(url string, env func(string) string) string {
	h := ""
	if env != nil {
		h = env("OLLAMA_HOST")
	}
	if h == "" {
		if url != "" {
			return url
		}
		return DefaultLocalURL
	}
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	return strings.TrimSuffix(h, "/") + "/v1"
}

// Models asks an OpenAI-compatible server for its models (GET /models),
// with apiKey when there is one, waiting at most half a second; ok is
// false when it does not answer.
func Models(ctx context.Context, baseURL, apiKey string) (ids []string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(baseURL, "/")+"/models", nil)
	if err != nil {
		return nil, false
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, false
	}
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, true
	}
	for _, m := range body.Data {
		ids = append(ids, m.ID)
	}
	return ids, true
}
