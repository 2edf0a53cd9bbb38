package clitest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/loomhq/loom/share"
)

// OpenShare reads a share link of the hub at base as a browser does:
// the page answers, and the ciphertext opens with the key of the
// link's fragment. It returns the share's id, its ciphertext and the
// text of its parts (text, input and output, a line each).
func OpenShare(t *testing.T, base, link string) (id string, blob []byte, text string) {
	t.Helper()
	i := strings.Index(link, "#k=")
	if !strings.HasPrefix(link, base+share.PagePath) || i < 0 {
		t.Fatalf("link %q", link)
	}
	id, key := strings.TrimPrefix(link[:i], base+share.PagePath), link[i+3:]
	if resp, err := http.Get(link); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET the link: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	blob, err := (&share.Client{URL: base}).Blob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	p, err := share.Open(blob, key)
	if err != nil {
		t.Fatalf("open the share: %v", err)
	}
	var b strings.Builder
	for _, m := range p.Messages {
		for _, pt := range m.Parts {
			b.WriteString(pt.Text + pt.Input + pt.Output + "\n")
		}
	}
	return id, blob, b.String()
}
