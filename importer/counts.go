package importer

// Count is a token count read from a file as a JSON number: a whole
// number within what a sum of many cannot overflow, else none.
func Count(f float64) int64 {
	if !(f > 0 && f < 1e15) {
		return 0
	}
	return int64(f)
}

// Dollars is a cost read from a file: a finite amount above zero, else
// none.
func Dollars(f float64) float64 {
	if !(f > 0 && f < 1e12) {
		return 0
	}
	return f
}
