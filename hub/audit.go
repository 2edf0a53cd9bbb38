package hub

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"

	"github.com/loomhq/loom"
)

// Authors audit the hub (docs/team.md, "A dropped record is restored or
// every member is told"): a member's machine asks, at every sync, for
// the digest of what the hub holds of its own writer id, and compares it
// with the digest of what it sent; only when they differ does it ask
// for each record's sum, to find what the hub lost or altered. The hub
// sends 64 bytes per writer at each sync, 80 bytes a record on a
// mismatch, never the records.

// Sums answers GET TeamPath/sums?host=H&after=N[&list=1]: the digest of
// writer host's records after index N (loom.TeamSumsDigest), and with
// list=1 each one's sum.
type Sums struct {
	Host    string    `json:"host"`
	Records int       `json:"records"`
	Last    int64     `json:"last"`
	Digest  string    `json:"digest"`
	Sums    []SumLine `json:"sums,omitempty"`
}

// SumLine is one record's index and sum (hex) on the wire.
type SumLine struct {
	Index int64  `json:"index"`
	Sum   string `json:"sum"`
}

// mountAudit adds the sums endpoint to mux, through api.
func (h *teamHandler) mountAudit(mux Mux, api func(http.HandlerFunc) http.HandlerFunc) {
	mux.HandleFunc("GET "+teamRoot+"/sums", api(h.teamAPI(h.sums)))
}

func (h *teamHandler) sums(w http.ResponseWriter, r *http.Request) {
	after, err := intParam(r, "after")
	if err != nil {
		h.edge.Error(w, r, err)
		return
	}
	host := r.URL.Query().Get("host")
	if host == "" || len(host) > 64 {
		h.edge.Error(w, r, loom.Errorf(loom.EINVALID, "sums: name the writer (?host=…)"))
		return
	}
	// Opened as the team's records are: its members' hub users only.
	if _, err := h.open(r); err != nil {
		h.edge.Error(w, r, err)
		return
	}
	sums, err := h.st.TeamSums(r.Context(), r.PathValue("team"), host, after)
	if err != nil {
		h.edge.Error(w, r, err)
		return
	}
	out := Sums{Host: host, Records: len(sums), Digest: loom.TeamSumsDigest(sums)}
	if len(sums) > 0 {
		out.Last = sums[len(sums)-1].Index
	}
	if r.URL.Query().Get("list") == "1" {
		out.Sums = make([]SumLine, len(sums))
		for i, x := range sums {
			out.Sums[i] = SumLine{Index: x.Index, Sum: hex.EncodeToString(x.Sum)}
		}
	}
	writeJSON(h.edge, w, r, out, true)
}

// TeamSums returns the digest of what the hub holds of writer host's
// records after index after, and with list each one's sum.
func (c *Client) TeamSums(ctx context.Context, id, host string, after int64, list bool) (*Sums, error) {
	q := url.Values{"host": {host}, "after": {strconv.FormatInt(after, 10)}}
	if list {
		q.Set("list", "1")
	}
	var out Sums
	if err := c.call(ctx, http.MethodGet, TeamPath(id)+"/sums?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
