package secrets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Redact returns text with every secret replaced by its marker, and how
// many it replaced.
func (d *Detector) Redact(text string) (string, int) { return d.redact(text, nil) }

// redact is Redact, keeping in found (when not nil) the values it
// replaced, for their echoes.
func (d *Detector) redact(text string, found *Echoes) (string, int) {
	f := d.Find(text)
	if len(f) == 0 {
		return text, 0
	}
	found.add(text, f)
	return marked(text, f, ""), len(f)
}

// marked returns text with each of findings f replaced by mark and its
// rule's marker.
func marked(text string, f []Finding, mark string) string {
	var b strings.Builder
	b.Grow(len(text) + (len(mark)+24)*len(f))
	at := 0
	for _, x := range f {
		b.WriteString(text[at:x.Start])
		b.WriteString(mark + Marker(x.RuleID))
		at = x.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// RedactCut is Redact for a text that was cut short at its end when cut
// is set (and does not say so with "…"): a key of which only the start
// is left is redacted too.
func (d *Detector) RedactCut(text string, cut bool) (string, int) {
	return d.redactCut(text, cut, nil)
}

func (d *Detector) redactCut(text string, cut bool, found *Echoes) (string, int) {
	if !cut || strings.HasSuffix(text, Cut) {
		return d.redact(text, found)
	}
	r, n := d.redact(text+Cut, found)
	return strings.TrimSuffix(r, Cut), n
}

// Hint shows a secret as far as a report may: its first and last four
// characters when it is long enough that they give it away no more
// than its kind does, less when it is shorter, and never the rest.
func Hint(secret string) string {
	r := []rune(secret)
	switch {
	case len(r) >= 24:
		return string(r[:4]) + "…" + string(r[len(r)-4:])
	case len(r) >= 12:
		return string(r[:2]) + "…" + string(r[len(r)-2:])
	case len(r) >= 8:
		return string(r[:1]) + "…" + string(r[len(r)-1:])
	}
	// Too short to show any of it: how long it is helps find it.
	return fmt.Sprintf("…(%d)", len(r))
}

// Fingerprint names d's rules and allow-list: two Detectors with the
// same fingerprint find the same secrets, so a scan remembered under it
// holds for d.
func (d *Detector) Fingerprint() string {
	h := sha256.New()
	for _, r := range d.rules {
		fmt.Fprintf(h, "%s\x00%s\x00%q\x00%v\x00%v\x00", r.ID, r.Regex, r.Keywords, r.MinEntropy, r.Window)
	}
	for _, m := range d.matchers {
		fmt.Fprintf(h, "matcher\x00%s\x00", m.id)
	}
	fmt.Fprintf(h, "version\x00%d\x00", detectorVersion)
	for _, a := range d.allow {
		fmt.Fprintf(h, "allow\x00%s\x00", a)
	}
	ids := slices.Sorted(maps.Keys(d.allowIDs))
	for _, id := range ids {
		fmt.Fprintf(h, "id\x00%s\x00", id)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
