// Package upn is the server's directory of user principal names: what
// the upn=true parameter of the Data Lake Storage Gen2 REST API (Path -
// List, Path - Get Properties with getStatus or getAccessControl) turns
// object ids into. Azure reads Microsoft Entra ID; this server has no
// directory of its own, so it learns one from the bearer tokens it
// authenticates: a token's oid claim names the caller and its upn claim
// (else unique_name, else preferred_username: "Microsoft identity
// platform access tokens", claims reference) the caller's user principal
// name. Only users send tokens with those claims, so groups and
// applications are never learned and stay ids, as on Azure ("Group and
// application object IDs are not translated because they do not have
// unique friendly names", upn parameter of Path - List).
//
// The names are kept in the kv store, one key per object id,
//
//	("dlo", oid) -> the user principal name
//
// so every front end sharing the store answers with what any of them
// learned, and it survives restarts. A token arrives with every request
// of its caller, so Learn writes only a name that is new or changed and
// remembers in memory what the store holds, rechecking an entry at most
// once per Recheck (or the interval given to New), so a name changed
// through another front end is noticed.
package upn

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Key is the store key of the name of object id oid.
func Key(oid string) []byte { return kv.Key("dlo", oid) }

// Recheck is how long, by default, a name Learn has seen in the store is
// trusted before the store is read again for the same object id.
const Recheck = 15 * time.Minute

// maxCached bounds the memory Learn keeps; past it the memory starts
// afresh (the store still holds every name).
const maxCached = 1 << 16

// Directory learns names from authenticated tokens into a store.
type Directory struct {
	store   kv.Store
	clock   clock.Clock
	recheck time.Duration

	mu    sync.Mutex
	known map[string]seen
}

type seen struct {
	name string
	at   time.Time
}

// New returns a directory over store; times come from clk. A name seen
// in the store is trusted for recheck (0: Recheck) before it is read
// again.
func New(store kv.Store, clk clock.Clock, recheck time.Duration) *Directory {
	if recheck <= 0 {
		recheck = Recheck
	}
	return &Directory{store: store, clock: clk, recheck: recheck, known: map[string]seen{}}
}

// Learn records that object id oid has the user principal name name:
// nothing is read or written when the directory saw the same pair in the
// store within its recheck interval; else one transaction reads the
// stored name and writes name only when it differs. An empty oid or name is ignored.
func (d *Directory) Learn(ctx context.Context, oid, name string) error {
	if oid == "" || name == "" {
		return nil
	}
	now := d.clock.Now()
	d.mu.Lock()
	s, ok := d.known[oid]
	d.mu.Unlock()
	if ok && s.name == name && now.Sub(s.at) < d.recheck {
		return nil
	}
	err := d.store.Update(ctx, func(tx kv.Tx) error {
		v, err := tx.Get(Key(oid))
		switch {
		case err == nil && string(v) == name:
			return nil
		case err != nil && !errors.Is(err, kv.ErrNotFound):
			return err
		}
		return tx.Put(Key(oid), []byte(name))
	})
	if err != nil {
		return err
	}
	d.mu.Lock()
	if len(d.known) >= maxCached {
		d.known = map[string]seen{}
	}
	d.known[oid] = seen{name: name, at: now}
	d.mu.Unlock()
	return nil
}

// Names maps ids to the names learned for them, in the caller's
// transaction, reading each distinct id once: an id without a name
// (a group, an application, a user never seen, "$superuser") maps to
// itself.
type Names struct {
	tx   kv.Tx
	seen map[string]string
}

// NewNames returns the name lookup of one response, reading through tx.
func NewNames(tx kv.Tx) *Names { return &Names{tx: tx, seen: map[string]string{}} }

// Of is the user principal name of id, or id.
func (n *Names) Of(id string) (string, error) {
	if id == "" || id[0] == '$' {
		return id, nil
	}
	if v, ok := n.seen[id]; ok {
		return v, nil
	}
	name := id
	v, err := n.tx.Get(Key(id))
	switch {
	case err == nil && len(v) > 0:
		name = string(v)
	case err != nil && !errors.Is(err, kv.ErrNotFound):
		return "", err
	}
	n.seen[id] = name
	return name, nil
}
