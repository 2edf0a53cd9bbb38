package synclog

// Rehome is a store's move to a new host id when its log and the hub's
// copy of it part (a store restored from a backup or copied, a record at
// its index it did not write): its host was Old and is New; the first
// Shared records of Old's log are the same in the store and on the hub,
// and the Moved records the store wrote after them are New's first.
// The store applies the hub's records of Old after Shared as another
// machine's.
type Rehome struct {
	Old    HostID `json:"old"`
	New    HostID `json:"new"`
	Shared int64  `json:"shared"`
	Moved  int    `json:"moved"`
}
