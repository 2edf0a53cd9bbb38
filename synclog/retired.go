package synclog

// TypeRetired is a host's word that another host's records from an
// index on are not its: what a store writes when it finds at its own
// host's next index on the hub a record it did not write and that no
// machine with the key wrote (it does not open), and takes a new host
// id (sessionstore.Rehome). Every host then stops that host's log before it,
// instead of failing on it at every sync. Only a holder of the key can
// write it.
const TypeRetired Type = 13

// Retired says that Host's records after index After are not loom's.
type Retired struct {
	Host  HostID `json:"host"`
	After int64  `json:"after"`
}

// Type implements Payload.
func (*Retired) Type() Type { return TypeRetired }

// Validate implements Payload.
func (p *Retired) Validate() error {
	if err := p.Host.Validate(); err != nil {
		return invalid("retired host: %v", err)
	}
	return nil
}
