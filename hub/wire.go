package hub

// The wire format of sync between a machine's loom sync (Client) and the
// hub (Handler, which loom serve mounts): the paths and JSON bodies of
// its endpoints, written once for both sides and for every record space
// (a user's own under OwnRoot, a team's under TeamPath(id)). Header and body are
// base64 (standard alphabet, padded), as encoding/json writes bytes; the
// hub never decodes them further than the header (see docs/sync.md).

import "github.com/loomhq/loom"

// The endpoints.
const (
	// OwnRoot is the root of a user's own space: OwnRoot+"/hosts" and
	// "/records", as a team's space has them under TeamPath(id).
	OwnRoot = "/api/v1/sync"
	// HostsPath answers GET with Hosts.
	HostsPath = OwnRoot + "/hosts"
	// RecordsPath answers GET ?host=H&after=N&limit=L with a Page, and
	// takes a Push by POST, answering Pushed.
	RecordsPath = OwnRoot + "/records"
)

// Record is one record of a host's log (a team member's machine's, in
// a team's space).
type Record struct {
	Host  string `json:"host"`
	Index int64  `json:"index"`
	// Epoch is the team key's epoch of a team's record; a user's own
	// records have none, and go without it.
	Epoch  int    `json:"epoch,omitempty"`
	Header []byte `json:"header"`
	Body   []byte `json:"body"`
	// ReceivedAt is when the hub stored the record; in answers only.
	ReceivedAt string `json:"received_at,omitempty"`
}

// RecordOf returns r as it travels.
func RecordOf(r loom.SyncRecord) Record {
	out := Record{Host: r.Host, Index: r.Index, Epoch: r.Epoch, Header: r.Header, Body: r.Body}
	if !r.ReceivedAt.IsZero() {
		out.ReceivedAt = loom.FormatTime(r.ReceivedAt)
	}
	return out
}

// Store returns r as a store keeps it (without the hub's time).
func (r Record) Store() loom.SyncRecord {
	return loom.SyncRecord{Host: r.Host, Index: r.Index, Epoch: r.Epoch, Header: r.Header, Body: r.Body}
}

// Host is what the hub holds of one host.
type Host struct {
	Host      string `json:"host"`
	Last      int64  `json:"last"`
	Records   int64  `json:"records"`
	Bytes     int64  `json:"bytes"`
	UpdatedAt string `json:"updated_at,omitempty"`
}

// Hosts is the answer of HostsPath: the user's hosts, the id of the
// sync key their records are sealed with ("" before the first), and the
// user the token is of, whose sessions the records hold.
type Hosts struct {
	Hosts []Host `json:"hosts"`
	KeyID string `json:"key_id"`
	User  string `json:"user"`
}

// Page is a page of a host's records, More set when the hub holds
// records after it.
type Page struct {
	Records []Record `json:"records"`
	More    bool     `json:"more"`
}

// Push is the body of a POST to RecordsPath.
type Push struct {
	Records []Record `json:"records"`
}

// Pushed answers a Push: how many records the hub had not held before,
// and the last index it holds of each host the push named.
type Pushed struct {
	Stored int              `json:"stored"`
	Last   map[string]int64 `json:"last"`
}
