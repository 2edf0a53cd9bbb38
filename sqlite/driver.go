package sqlite

// The driver sits behind this one file so that another can be swapped in.
import _ "modernc.org/sqlite"

const driverName = "sqlite"
