//go:build !unix && !windows

package cputime

import "time"

// Used is 0: this system's CPU time is not read.
func Used() time.Duration { return 0 }
