// Package embeddingtest is a fake OpenAI-compatible embeddings server for
// tests: deterministic vectors (a hashed bag of words, so texts sharing
// words are near), and a count of the requests for each text.
package embeddingtest

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"unicode"
)

// Dims is the length of the fake's vectors.
const Dims = 64

// Server is a running fake.
type Server struct {
	*httptest.Server
	// Hold, when set, is called with each request's texts (and its
	// context, which ends when the client goes) before it is answered:
	// a test blocks there to act while a request is in flight. When it
	// returns false the request is dropped, not answered or counted.
	Hold func(ctx context.Context, texts []string) bool

	mu     sync.Mutex
	counts map[string]int
	calls  int
	vector func(string) []float32
}

// New starts a fake; its Close stops it. Its URL + "/v1" is the base URL
// to configure.
func New() *Server { return NewWith(Vector) }

// NewWith starts a fake whose vector of a text is vector's.
func NewWith(vector func(string) []float32) *Server {
	s := &Server{counts: map[string]int{}, vector: vector}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"nomic-embed-text:latest","object":"model"}]}`))
	})
	s.Server = httptest.NewServer(mux)
	return s
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var texts []string
	if json.Unmarshal(req.Input, &texts) != nil {
		var one string
		if json.Unmarshal(req.Input, &one) != nil {
			http.Error(w, `{"error":{"message":"input must be a string or a list of strings"}}`, http.StatusBadRequest)
			return
		}
		texts = []string{one}
	}
	if s.Hold != nil && !s.Hold(r.Context(), texts) {
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	for i, t := range texts {
		out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: s.vector(t)})
	}
	s.mu.Lock()
	s.calls++
	for _, t := range texts {
		s.counts[t]++
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// Counts returns how often each text was embedded (answered).
func (s *Server) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.counts))
	for k, v := range s.counts {
		out[k] = v
	}
	return out
}

// Calls is how many requests were answered.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Vector is the fake's vector of text: each lower-cased word, and each
// word's first four letters, adds one to a dimension chosen by its hash.
func Vector(text string) []float32 {
	v := make([]float32, Dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		v[hash(w)%Dims]++
		if r := []rune(w); len(r) > 4 {
			v[hash(string(r[:4]))%Dims] += 0.5
		}
	}
	return v
}

func hash(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}
