package embedding_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loomhq/loom/config"
	"github.com/loomhq/loom/embedding"
	"github.com/loomhq/loom/embedding/embeddingtest"
)

func TestEmbedReturnsUnitVectorsInOrder(t *testing.T) {
	srv := embeddingtest.New()
	defer srv.Close()
	c := embedding.New(srv.URL+"/v1", "nomic-embed-text", "")
	texts := []string{"retry the flaky test", "postgres connection refused", "retry the flaky test"}
	vecs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 {
		t.Fatalf("got %d vectors, want 3", len(vecs))
	}
	for i, v := range vecs {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("vector %d has length² %v, want 1", i, sum)
		}
	}
	if vecs[0][0] != vecs[2][0] || vecs[0][5] != vecs[2][5] {
		t.Error("the same text gave different vectors")
	}
}

func TestEmbedErrorIsOneLine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"message":"model \"nomic-embed-text\" not found,\n try pulling it first"}}`))
	}))
	defer srv.Close()
	_, err := embedding.New(srv.URL+"/v1", "nomic-embed-text", "").Embed(context.Background(), []string{"x"})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "try pulling it first") {
		t.Fatalf("error = %v, want one line with the status and the server's message", err)
	}
}

func TestEmbedRefusesBadAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"not json":       `<html>`,
		"too few":        `{"data":[]}`,
		"repeated index": `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`,
		"ragged":         `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}`,
		"empty vector":   `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
		_, err := embedding.New(srv.URL, "m", "").Embed(context.Background(), []string{"a", "b"})
		srv.Close()
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestFindUsesLocalServerWithTheModel(t *testing.T) {
	srv := embeddingtest.New()
	defer srv.Close()
	env := func(k string) string {
		if k == "OLLAMA_HOST" {
			return srv.URL
		}
		return ""
	}
	c, why := embedding.Find(context.Background(), config.EmbeddingsSettings{}, "", env)
	if c == nil {
		t.Fatalf("no client: %s", why)
	}
	if c.Model() != "nomic-embed-text:latest" || !strings.HasPrefix(c.URL(), srv.URL+"/v1/") {
		t.Errorf("client of %s at %s, want the local server's nomic-embed-text", c.Model(), c.URL())
	}
	c, why = embedding.Find(context.Background(), config.EmbeddingsSettings{Model: "mxbai-embed-large"}, "", env)
	if c != nil || !strings.Contains(why, "ollama pull mxbai-embed-large") {
		t.Errorf("a model the server lacks: client %v, reason %q", c, why)
	}
	off := false
	if c, _ := embedding.Find(context.Background(), config.EmbeddingsSettings{URL: srv.URL, Enabled: &off}, "", env); c != nil {
		t.Error("enabled = false still gave a client")
	}
}
