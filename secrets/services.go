package secrets

import (
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// servicesTable is, for each service's name or keyword, the formats of
// its credentials that TruffleHog's detectors document, one name a
// line (services.txt, which secrets/anchors/formats/gen.py writes;
// docs/security.md says how the table was made). A data file rather
// than a Go literal of a thousand lines.
//
//go:embed services.txt
var servicesTable string

// services are the formats of each service's credentials, read from
// the table the first time a scan needs them, not when the program
// starts: most runs of loom scan nothing (a search, a list), and reading
// the table is most of this package's start-up.
var services = sync.OnceValue(func() serviceTables {
	formats := readServiceFormats(servicesTable)
	return serviceTables{formats: formats, aliased: aliasedFormats(formats), prefixes: servicePrefixes(formats)}
})

// serviceTables are the services' formats (by a service's name), the
// same with the names' aliases, and the first three bytes of the names
// with a tight format (mayNameService).
type serviceTables struct {
	formats  map[string][]serviceFormat
	aliased  map[string][]serviceFormat
	prefixes map[[3]byte]bool
}

// readServiceFormats reads a table of services' formats: lines of a
// name and its formats (lo,hi,least,greatest: the bytes allowed and
// the lengths), and comments after #. The table is part of the
// program, so a line it cannot read panics, as a bad regular
// expression does.
func readServiceFormats(table string) map[string][]serviceFormat {
	m := map[string][]serviceFormat{}
	for line := range strings.Lines(table) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		var fs []serviceFormat
		for _, f := range strings.Fields(rest) {
			p := strings.Split(f, ",")
			if len(p) != 4 {
				panic(fmt.Sprintf("secrets: services.txt: %s: a format of %d fields, not 4", name, len(p)))
			}
			lo, err1 := strconv.ParseUint(p[0], 0, 64)
			hi, err2 := strconv.ParseUint(p[1], 0, 64)
			least, err3 := strconv.Atoi(p[2])
			greatest, err4 := strconv.Atoi(p[3])
			if err := errors.Join(err1, err2, err3, err4); err != nil {
				panic(fmt.Sprintf("secrets: services.txt: %s: %v", name, err))
			}
			fs = append(fs, serviceFormat{lo: lo, hi: hi, min: least, max: greatest})
		}
		m[name] = fs
	}
	return m
}
