package secrets

// Code generated from the detectors of TruffleHog at commit
// 3ab759fef4bb5935d4fe9ac68b503d05346b8364 (pkg/detectors/*): for each
// service's name or keyword, the formats of its credentials that the
// detectors document — the bytes each is made of and its least and
// greatest length. No detector's code is here, only those facts.
// docs/security.md says how the table was made. DO NOT EDIT.

import "maps"

// serviceFormats are the formats of each service's credentials, joined
// from the parts of the table (services_*.go).
var serviceFormats = func() map[string][]serviceFormat {
	m := make(map[string][]serviceFormat, 1042)
	for _, part := range []map[string][]serviceFormat{servicesAToE, servicesFToO, servicesPToZ} {
		maps.Copy(m, part)
	}
	return m
}()
