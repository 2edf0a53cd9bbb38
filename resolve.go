package loom

// IsIDPrefix reports whether ref could be the start of an id: hex digits
// and dashes only.
func IsIDPrefix(ref string) bool {
	for _, r := range ref {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'f', r >= 'A' && r <= 'F', r == '-':
		default:
			return false
		}
	}
	return true
}
