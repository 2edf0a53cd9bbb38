package share

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/hub"
)

// The hub's share endpoints (docs/server.md). Creating, listing and
// revoking take a token of the share's user, full or share-only; the
// blob and the page answer anyone who has the id, and 404 once the share
// is revoked or expired.
const (
	SharesPath = "/api/v1/shares"
	// PagePath is where a link opens: PagePath + id + "#k=" + key.
	PagePath = "/share/"
)

// BlobPath is where the page fetches share id's ciphertext.
func BlobPath(id string) string { return SharesPath + "/" + url.PathEscape(id) + "/blob" }

// List is the answer of GET SharesPath.
type List struct {
	Shares []*loom.Share `json:"shares"`
}

// Link returns the address that opens share id of the hub at base with
// key.
func Link(base, id, key string) string {
	return strings.TrimSuffix(base, "/") + PagePath + url.PathEscape(id) + "#k=" + key
}

// Client calls one hub's share endpoints as one user.
type Client struct {
	// URL is the hub's base URL (http://host:port).
	URL string
	// Token is a token of the user's on the hub, full or share-only.
	Token string
	// HTTP is the client of the calls (http.DefaultClient when nil).
	HTTP *http.Client
}

// Create uploads blob to be served until expires.
func (c *Client) Create(ctx context.Context, blob []byte, expires time.Time) (*loom.Share, error) {
	q := url.Values{"expires_at": {loom.FormatTime(expires)}}
	var out loom.Share
	if err := c.call(ctx, http.MethodPost, SharesPath+"?"+q.Encode(), blob, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Shares lists the user's shares on the hub, newest first.
func (c *Client) Shares(ctx context.Context) ([]*loom.Share, error) {
	var out List
	if err := c.call(ctx, http.MethodGet, SharesPath, nil, &out); err != nil {
		return nil, err
	}
	return out.Shares, nil
}

// Revoke revokes share id: the hub deletes its ciphertext and the link
// answers 404 from then on.
func (c *Client) Revoke(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, SharesPath+"/"+url.PathEscape(id), nil, nil)
}

// Blob fetches share id's ciphertext as the page does, without a token.
func (c *Client) Blob(ctx context.Context, id string) ([]byte, error) {
	var out []byte
	err := c.call(ctx, http.MethodGet, BlobPath(id), nil, &out)
	return out, err
}

// call sends a request and reads the answer into out: JSON, or the raw
// body when out is a *[]byte. The hub's errors come back as loom errors
// with their code.
func (c *Client) call(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.URL, "/")+path, rd)
	if err != nil {
		return fmt.Errorf("hub %s: %w", c.URL, err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("hub %s: %w", c.URL, ctx.Err())
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("hub %s is unreachable: %w", c.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return c.refusal(resp)
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o, err = io.ReadAll(io.LimitReader(resp.Body, loom.MaxShareBytes+1))
	default:
		err = json.NewDecoder(resp.Body).Decode(out)
	}
	if err != nil {
		return fmt.Errorf("hub %s: read the answer: %w", c.URL, err)
	}
	return nil
}

// refusal turns the hub's error answer into a loom error.
func (c *Client) refusal(resp *http.Response) error {
	code, msg, ok := hub.ErrorOf(resp)
	if !ok {
		return fmt.Errorf("hub %s: %s (is it a loom serve with shares?)", c.URL, resp.Status)
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return loom.Errorf(loom.EINVALID, "hub %s: %s; make a token on the hub with loom token create --scope share", c.URL, msg)
	case http.StatusNotFound:
		code = loom.ENOTFOUND
	case http.StatusBadRequest:
		code = loom.EINVALID
	}
	if code != loom.ENOTFOUND && code != loom.EINVALID {
		code = loom.EINTERNAL
	}
	return loom.Errorf(code, "hub %s: %s", c.URL, msg)
}
