// Package embedding gets the vectors that rank search by meaning from any
// server that speaks OpenAI's embeddings API (POST /v1/embeddings):
// Ollama, llama.cpp's server, LM Studio, vLLM, OpenAI. It speaks that one
// endpoint over net/http, as the providers speak theirs.
package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/openai"
)

// DefaultModel is the model asked for when none is configured: Ollama's
// usual embedding model (768 dimensions).
const DefaultModel = "nomic-embed-text"

// Bounds on one call.
const (
	// Timeout is the longest one request may take: a batch on a local
	// server without a GPU takes seconds.
	Timeout = 2 * time.Minute
	// MaxResponseBytes is the largest answer read.
	MaxResponseBytes = 64 << 20
	// MaxDims is the most dimensions a vector may have.
	MaxDims = 8192
)

// Client asks one server for the vectors of texts with one model.
type Client struct {
	url    string
	model  string
	apiKey string
	http   *http.Client
}

// New returns a client of the server at baseURL (the API root including
// /v1) for model, sending apiKey as a bearer token when there is one.
func New(baseURL, model, apiKey string) *Client {
	return &Client{
		url:    strings.TrimSuffix(baseURL, "/") + "/embeddings",
		model:  model,
		apiKey: apiKey,
		http:   &http.Client{Timeout: Timeout},
	}
}

// Model is the model the client asks for.
func (c *Client) Model() string { return c.model }

// URL is where the client sends its requests.
func (c *Client) URL() string { return c.url }

// Embed returns the vector of each of texts, in order, each scaled to
// length 1 (so that a dot product is the cosine similarity).
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(map[string]any{"model": c.model, "input": texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings at %s: %w", c.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings at %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("embeddings at %s: %w", c.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings at %s: HTTP %d: %s", c.url, resp.StatusCode, errorText(data))
	}
	if len(data) > MaxResponseBytes {
		return nil, fmt.Errorf("embeddings at %s: the answer is larger than %d MB", c.url, MaxResponseBytes>>20)
	}
	return parse(data, len(texts))
}

// parse reads an embeddings answer for n texts.
func parse(data []byte, n int) ([][]float32, error) {
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("embeddings: the answer is not an embeddings list: %w", err)
	}
	if len(out.Data) != n {
		return nil, fmt.Errorf("embeddings: asked for %d vectors, got %d", n, len(out.Data))
	}
	if n == 0 {
		return nil, nil
	}
	vecs := make([][]float32, n)
	dims := len(out.Data[0].Embedding)
	for _, d := range out.Data {
		switch {
		case d.Index < 0 || d.Index >= n || vecs[d.Index] != nil:
			return nil, fmt.Errorf("embeddings: the answer has a bad or repeated index %d", d.Index)
		case len(d.Embedding) == 0 || len(d.Embedding) > MaxDims:
			return nil, fmt.Errorf("embeddings: a vector has %d dimensions (1 to %d expected)", len(d.Embedding), MaxDims)
		case len(d.Embedding) != dims:
			return nil, errors.New("embeddings: the vectors of one answer differ in length")
		}
		vecs[d.Index] = Normalize(d.Embedding)
	}
	return vecs, nil
}

// Normalize scales v to length 1 in place and returns it; a zero vector
// stays zero.
func Normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		clear(v)
		return v
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// errorText is the message of an error answer, on one line and short.
func errorText(data []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(e.Error, &s) == nil:
			msg = s
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// Find returns the client config.toml's [embeddings] describes; with no
// URL there, a local server at localURL (Ollama's address when empty,
// see openai.LocalURL: where the chat model is looked for too) that
// answers and has the model. It returns nil, with a one-line reason,
// when there is none: ranking by meaning is off.
func Find(ctx context.Context, cfg config.EmbeddingsSettings, localURL string, env func(string) string) (*Client, string) {
	if cfg.Enabled != nil && !*cfg.Enabled {
		return nil, "[embeddings] enabled = false"
	}
	model := cfg.Model
	if model == "" {
		model = DefaultModel
	}
	key := ""
	if cfg.APIKeyEnv != "" && env != nil {
		key = env(cfg.APIKeyEnv)
	}
	if cfg.URL != "" {
		return New(cfg.URL, model, key), ""
	}
	local := openai.LocalURL(localURL, env)
	models, ok := openai.Models(ctx, local, "")
	if !ok {
		return nil, "no embeddings endpoint is set (docs/search.md)"
	}
	for _, m := range models {
		if m == model || strings.TrimSuffix(m, ":latest") == model {
			return New(local, m, key), ""
		}
	}
	return nil, fmt.Sprintf("%s has no %s (ollama pull %s)", local, model, model)
}
