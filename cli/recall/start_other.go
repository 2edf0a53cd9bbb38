//go:build !linux

package recall

import (
	"sync"
	"time"
)

// processStart is the time of its first call: the process's start
// cannot be read here.
var processStart = sync.OnceValue(time.Now)
