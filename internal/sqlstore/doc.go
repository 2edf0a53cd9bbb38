// Package sqlstore is what loom's two SQL engines share and only they
// use, that is no rule of the store (those are package sessionstore's):
// the body codec, the search runner and its tiers, token checks
// and process liveness. It holds no SQL of either engine; its
// subpackages hold the SQL both share (query), their row readers
// (rowscan) and the migration runner (migrate).
package sqlstore
