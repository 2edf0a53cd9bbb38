package sessionstore

import (
	"context"
	"fmt"

	"github.com/loomhq/loom"
	"github.com/loomhq/loom/synclog"
)

// KeySteps are the reads and writes of session keys the key rules make.
type KeySteps interface {
	// KeyOf returns the user, project and key of session id's row; ok
	// is false when there is no such row.
	KeyOf(ctx context.Context, id string) (k KeyScope, ok bool, err error)
	// Claimants returns the live sessions whose row or merged metadata
	// names key k.
	Claimants(ctx context.Context, k KeyScope) ([]string, error)
	// GiveKey takes key k from every live session but holder, and gives
	// it to holder when it is not "".
	GiveKey(ctx context.Context, k KeyScope, holder string) error
	// KeyTaken reports whether a live session other than id has key k.
	KeyTaken(ctx context.Context, k KeyScope, id string) (bool, error)
}

// scopeOf returns the scope of the key session id has, or claims when it
// lost it to another session's earlier claim.
func scopeOf(ctx context.Context, tx interface {
	StampSteps
	KeySteps
}, id string) (KeyScope, error) {
	k, _, err := claimOf(ctx, tx, id)
	return k, err
}

// claimOf returns the key session id claims, in its scope, and the stamp
// of the claim: the key its merged metadata names (Meta.Key), or its
// row's key with the zero stamp when its key was never stamped.
func claimOf(ctx context.Context, tx interface {
	StampSteps
	KeySteps
}, id string) (KeyScope, synclog.Stamp, error) {
	k, ok, err := tx.KeyOf(ctx, id)
	if err != nil {
		return k, synclog.Stamp{}, fmt.Errorf("read key of %s: %w", id, err)
	}
	if !ok {
		return KeyScope{}, synclog.Stamp{}, nil
	}
	m, err := loadMeta(ctx, tx, id)
	if err != nil {
		return k, synclog.Stamp{}, err
	}
	if !m.Key.Stamp.IsZero() {
		k.Key = m.Key.Value
	}
	return k, m.Key.Stamp, nil
}

// settleKey gives key k to the live session with the earliest claim on
// it (keyHolder) and takes it from the others: two machines that
// each started a session with one key in one project keep both sessions,
// and every host gives the key to the same one whatever order their
// records arrive in. A session claims the key its merged metadata says
// (claimOf). It is called wherever the claims on a key change: a session
// made, or given another key or project, here or by a record, or going
// to the trash or coming back from it. A purge, which removes the
// session's row and its claim with it, settles nothing: on the machine
// that made it the rows are gone before it is recorded, so a key it lets
// go goes to no session on any machine.
func settleKey(ctx context.Context, tx interface {
	StampSteps
	KeySteps
}, k KeyScope) error {
	if k.Key == "" {
		return nil
	}
	ids, err := tx.Claimants(ctx, k)
	if err != nil {
		return fmt.Errorf("find the sessions that claim key %q: %w", k.Key, err)
	}
	var claims []KeyClaim
	for _, id := range ids {
		c, st, err := claimOf(ctx, tx, id)
		if err != nil {
			return err
		}
		if c == k { // else its row has the key, but its claim is another's
			claims = append(claims, KeyClaim{SessionID: id, Stamp: st})
		}
	}
	holder, ok := keyHolder(claims)
	if !ok {
		holder.SessionID = ""
	}
	if err := tx.GiveKey(ctx, k, holder.SessionID); err != nil {
		return fmt.Errorf("settle key %q: %w", k.Key, err)
	}
	return nil
}

// keyless returns row, or a copy without its key when another live
// session here has it (to store first, and then give the key to the
// earlier claim: settleKey), the key's scope, and whether it was taken.
func keyless(ctx context.Context, tx KeySteps, row *loom.Session) (*loom.Session, KeyScope, bool, error) {
	k := KeyScope{row.UserID, row.Project.ID, row.Key}
	taken, err := keyTaken(ctx, tx, k, row.ID)
	if err != nil || !taken {
		return row, k, taken, err
	}
	c := *row
	c.Key = ""
	return &c, k, true, nil
}

// keyTaken reports whether a live session other than id has key k.
func keyTaken(ctx context.Context, tx KeySteps, k KeyScope, id string) (bool, error) {
	if k.Key == "" {
		return false, nil
	}
	taken, err := tx.KeyTaken(ctx, k, id)
	if err != nil {
		return false, fmt.Errorf("read key %q: %w", k.Key, err)
	}
	return taken, nil
}
