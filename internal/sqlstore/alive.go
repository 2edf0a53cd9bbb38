package sqlstore

// Alive reports whether the process pid is running. A zombie (exited, not
// yet reaped) counts as gone: it will never write again.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return alive(pid)
}
