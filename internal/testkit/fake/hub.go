package fake

import (
	"context"
	"time"

	"github.com/loomhq/loom"
)

// TokenStore is a fake loom.TokenStore.
type TokenStore struct {
	CreateTokenFn       func(ctx context.Context, userID, name string, ttl time.Duration) (*loom.Token, string, error)
	CreateScopedTokenFn func(ctx context.Context, userID, name, scope string, ttl time.Duration) (*loom.Token, string, error)
	TokensFn            func(ctx context.Context, userID string) ([]*loom.Token, error)
	AuthenticateFn      func(ctx context.Context, secret string) (*loom.Token, error)
	RevokeTokenFn       func(ctx context.Context, id string) error
}

var _ loom.TokenStore = (*TokenStore)(nil)

// CreateToken calls CreateTokenFn.
func (fk *TokenStore) CreateToken(ctx context.Context, userID, name string, ttl time.Duration) (*loom.Token, string, error) {
	return call(fk.CreateTokenFn, "TokenStore.CreateToken")(ctx, userID, name, ttl)
}

// CreateScopedToken calls CreateScopedTokenFn.
func (fk *TokenStore) CreateScopedToken(ctx context.Context, userID, name, scope string, ttl time.Duration) (*loom.Token, string, error) {
	return call(fk.CreateScopedTokenFn, "TokenStore.CreateScopedToken")(ctx, userID, name, scope, ttl)
}

// Tokens calls TokensFn.
func (fk *TokenStore) Tokens(ctx context.Context, userID string) ([]*loom.Token, error) {
	return call(fk.TokensFn, "TokenStore.Tokens")(ctx, userID)
}

// Authenticate calls AuthenticateFn.
func (fk *TokenStore) Authenticate(ctx context.Context, secret string) (*loom.Token, error) {
	return call(fk.AuthenticateFn, "TokenStore.Authenticate")(ctx, secret)
}

// RevokeToken calls RevokeTokenFn.
func (fk *TokenStore) RevokeToken(ctx context.Context, id string) error {
	return call(fk.RevokeTokenFn, "TokenStore.RevokeToken")(ctx, id)
}

// ShareStore is a fake loom.ShareStore.
type ShareStore struct {
	CreateShareFn func(ctx context.Context, userID string, blob []byte, expires time.Time) (*loom.Share, error)
	SharesFn      func(ctx context.Context, userID string) ([]*loom.Share, error)
	ShareBlobFn   func(ctx context.Context, id string) ([]byte, error)
	RevokeShareFn func(ctx context.Context, userID, id string) error
}

var _ loom.ShareStore = (*ShareStore)(nil)

// CreateShare calls CreateShareFn.
func (fk *ShareStore) CreateShare(ctx context.Context, userID string, blob []byte, expires time.Time) (*loom.Share, error) {
	return call(fk.CreateShareFn, "ShareStore.CreateShare")(ctx, userID, blob, expires)
}

// Shares calls SharesFn.
func (fk *ShareStore) Shares(ctx context.Context, userID string) ([]*loom.Share, error) {
	return call(fk.SharesFn, "ShareStore.Shares")(ctx, userID)
}

// ShareBlob calls ShareBlobFn.
func (fk *ShareStore) ShareBlob(ctx context.Context, id string) ([]byte, error) {
	return call(fk.ShareBlobFn, "ShareStore.ShareBlob")(ctx, id)
}

// RevokeShare calls RevokeShareFn.
func (fk *ShareStore) RevokeShare(ctx context.Context, userID, id string) error {
	return call(fk.RevokeShareFn, "ShareStore.RevokeShare")(ctx, userID, id)
}

// SyncStore is a fake loom.SyncStore.
type SyncStore struct {
	PutSyncRecordsFn func(ctx context.Context, userID string, recs []loom.SyncRecord) (stored int, err error)
	SyncRecordsFn    func(ctx context.Context, userID, host string, after int64, limit int) ([]loom.SyncRecord, error)
	SyncHostsFn      func(ctx context.Context, userID string) ([]loom.SyncHost, error)
}

var _ loom.SyncStore = (*SyncStore)(nil)

// PutSyncRecords calls PutSyncRecordsFn.
func (fk *SyncStore) PutSyncRecords(ctx context.Context, userID string, recs []loom.SyncRecord) (stored int, err error) {
	return call(fk.PutSyncRecordsFn, "SyncStore.PutSyncRecords")(ctx, userID, recs)
}

// SyncRecords calls SyncRecordsFn.
func (fk *SyncStore) SyncRecords(ctx context.Context, userID, host string, after int64, limit int) ([]loom.SyncRecord, error) {
	return call(fk.SyncRecordsFn, "SyncStore.SyncRecords")(ctx, userID, host, after, limit)
}

// SyncHosts calls SyncHostsFn.
func (fk *SyncStore) SyncHosts(ctx context.Context, userID string) ([]loom.SyncHost, error) {
	return call(fk.SyncHostsFn, "SyncStore.SyncHosts")(ctx, userID)
}

// HubLocks is a fake loom.HubLocks.
type HubLocks struct {
	TakePushFn func(ctx context.Context, scope, user string, slots int) (release func(), ok bool, err error)
	LockUserFn func(ctx context.Context, name, user string) (unlock func(), err error)
}

var _ loom.HubLocks = (*HubLocks)(nil)

// TakePush calls TakePushFn.
func (fk *HubLocks) TakePush(ctx context.Context, scope, user string, slots int) (release func(), ok bool, err error) {
	return call(fk.TakePushFn, "HubLocks.TakePush")(ctx, scope, user, slots)
}

// LockUser calls LockUserFn.
func (fk *HubLocks) LockUser(ctx context.Context, name, user string) (unlock func(), err error) {
	return call(fk.LockUserFn, "HubLocks.LockUser")(ctx, name, user)
}

// TeamHub is a fake loom.TeamHub.
type TeamHub struct {
	TeamChainFn          func(ctx context.Context, team string, after int64) ([]loom.TeamEntry, error)
	AppendTeamEntryFn    func(ctx context.Context, team string, seq int64, entry []byte, members []loom.TeamMember) error
	TeamAccessFn         func(ctx context.Context, team, user string) (bool, error)
	PutTeamRecordsFn     func(ctx context.Context, team string, recs []loom.SyncRecord) (int, error)
	TeamRecordsFn        func(ctx context.Context, team, host string, after int64, limit int) ([]loom.SyncRecord, error)
	TeamHostsFn          func(ctx context.Context, team string) ([]loom.SyncHost, error)
	TeamLastFn           func(ctx context.Context, team, host string) (int64, error)
	TeamLastsFn          func(ctx context.Context, team string) ([]loom.SyncHost, error)
	ClaimTeamRecordsFn   func(ctx context.Context, team string, claims []loom.TeamClaim) error
	TeamUsageFn          func(ctx context.Context, team string, keys []string) (int64, int64, error)
	TeamSumsFn           func(ctx context.Context, team, host string, after int64) ([]loom.TeamSum, error)
	TeamSessionRecordsFn func(ctx context.Context, team, tag string, limit int) ([]loom.SyncRecord, error)
	RestoreTeamRecordFn  func(ctx context.Context, team string, rec loom.SyncRecord) error
}

var _ loom.TeamHub = (*TeamHub)(nil)

// TeamChain calls TeamChainFn.
func (fk *TeamHub) TeamChain(ctx context.Context, team string, after int64) ([]loom.TeamEntry, error) {
	return call(fk.TeamChainFn, "TeamHub.TeamChain")(ctx, team, after)
}

// AppendTeamEntry calls AppendTeamEntryFn.
func (fk *TeamHub) AppendTeamEntry(ctx context.Context, team string, seq int64, entry []byte, members []loom.TeamMember) error {
	return call(fk.AppendTeamEntryFn, "TeamHub.AppendTeamEntry")(ctx, team, seq, entry, members)
}

// TeamAccess calls TeamAccessFn.
func (fk *TeamHub) TeamAccess(ctx context.Context, team, user string) (bool, error) {
	return call(fk.TeamAccessFn, "TeamHub.TeamAccess")(ctx, team, user)
}

// PutTeamRecords calls PutTeamRecordsFn.
func (fk *TeamHub) PutTeamRecords(ctx context.Context, team string, recs []loom.SyncRecord) (int, error) {
	return call(fk.PutTeamRecordsFn, "TeamHub.PutTeamRecords")(ctx, team, recs)
}

// TeamRecords calls TeamRecordsFn.
func (fk *TeamHub) TeamRecords(ctx context.Context, team, host string, after int64, limit int) ([]loom.SyncRecord, error) {
	return call(fk.TeamRecordsFn, "TeamHub.TeamRecords")(ctx, team, host, after, limit)
}

// TeamHosts calls TeamHostsFn.
func (fk *TeamHub) TeamHosts(ctx context.Context, team string) ([]loom.SyncHost, error) {
	return call(fk.TeamHostsFn, "TeamHub.TeamHosts")(ctx, team)
}

// TeamLast calls TeamLastFn.
func (fk *TeamHub) TeamLast(ctx context.Context, team, host string) (int64, error) {
	return call(fk.TeamLastFn, "TeamHub.TeamLast")(ctx, team, host)
}

// TeamLasts calls TeamLastsFn.
func (fk *TeamHub) TeamLasts(ctx context.Context, team string) ([]loom.SyncHost, error) {
	return call(fk.TeamLastsFn, "TeamHub.TeamLasts")(ctx, team)
}

// TeamSums calls TeamSumsFn.
func (fk *TeamHub) TeamSums(ctx context.Context, team, host string, after int64) ([]loom.TeamSum, error) {
	return call(fk.TeamSumsFn, "TeamHub.TeamSums")(ctx, team, host, after)
}

// TeamSessionRecords calls TeamSessionRecordsFn.
func (fk *TeamHub) TeamSessionRecords(ctx context.Context, team, tag string, limit int) ([]loom.SyncRecord, error) {
	return call(fk.TeamSessionRecordsFn, "TeamHub.TeamSessionRecords")(ctx, team, tag, limit)
}

// RestoreTeamRecord calls RestoreTeamRecordFn.
func (fk *TeamHub) RestoreTeamRecord(ctx context.Context, team string, rec loom.SyncRecord) error {
	return call(fk.RestoreTeamRecordFn, "TeamHub.RestoreTeamRecord")(ctx, team, rec)
}

// ClaimTeamRecords calls ClaimTeamRecordsFn.
func (fk *TeamHub) ClaimTeamRecords(ctx context.Context, team string, claims []loom.TeamClaim) error {
	return call(fk.ClaimTeamRecordsFn, "TeamHub.ClaimTeamRecords")(ctx, team, claims)
}

// TeamUsage calls TeamUsageFn.
func (fk *TeamHub) TeamUsage(ctx context.Context, team string, keys []string) (int64, int64, error) {
	return call(fk.TeamUsageFn, "TeamHub.TeamUsage")(ctx, team, keys)
}

// TeamCheckpoints is a fake loom.TeamCheckpoints.
type TeamCheckpoints struct {
	TeamCheckpointFn    func(ctx context.Context, team, keyID string) (*loom.TeamCheckpoint, error)
	PutTeamCheckpointFn func(ctx context.Context, team string, c loom.TeamCheckpoint) error
}

var _ loom.TeamCheckpoints = (*TeamCheckpoints)(nil)

// TeamCheckpoint calls TeamCheckpointFn.
func (fk *TeamCheckpoints) TeamCheckpoint(ctx context.Context, team, keyID string) (*loom.TeamCheckpoint, error) {
	return call(fk.TeamCheckpointFn, "TeamCheckpoints.TeamCheckpoint")(ctx, team, keyID)
}

// PutTeamCheckpoint calls PutTeamCheckpointFn.
func (fk *TeamCheckpoints) PutTeamCheckpoint(ctx context.Context, team string, c loom.TeamCheckpoint) error {
	return call(fk.PutTeamCheckpointFn, "TeamCheckpoints.PutTeamCheckpoint")(ctx, team, c)
}
