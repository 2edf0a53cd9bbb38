package loom

import (
	"time"
)

// Validate checks a prune's options: the age is zero or more.
func (o PruneOptions) Validate() error {
	if o.OlderThan < 0 {
		return Errorf(EINVALID, "prune needs an age of zero or more")
	}
	return nil
}

// TrashTTL is how long deleted sessions stay restorable.
const TrashTTL = 7 * 24 * time.Hour
