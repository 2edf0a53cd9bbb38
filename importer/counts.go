package importer

// Dollars is a cost read from a file: a finite amount above zero, else
// none.
func Dollars(f float64) float64 {
	if !(f > 0 && f < 1e12) {
		return 0
	}
	return f
}
