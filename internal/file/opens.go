package file

import (
	"context"
	"errors"
	"fmt"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// The File domain's API for SMB opens (Opens); the SMB view
// (internal/smb/smbfs) is a thin adapter over it.
//
// An SMB2 front end serves the same shares, directories and files as the
// REST operations: the same entry records, the same extent parts and the
// same ETag/Last-Modified history, so a file written over SMB reads back
// byte-exact over REST and the other way round. Every Opens call is one kv
// transaction (or, for reads and writes, one transaction plus the data
// streamed or staged outside it) and re-reads what it needs, so REST
// changes made between two SMB calls are seen by the second. What a file
// operation does — READ, WRITE, the size setters, basic information, a
// delete disposition, a rename — is the File domain's (domain.go), the
// same call the REST handlers make with an open-less caller; Opens adds
// the SMB parameter checks and opens, closes and locks.
//
// Opens are the handle records of package handle (the global open table
// shared with REST, List Handles and Force Close Handles): share modes by
// MS-FSA 2.1.5.1.2, delete-on-close and delete-pending, and the liveness
// of the front end that holds them (its owner id). An *Open keeps only
// identities (account, share, file ID, handle ID) and what was granted at
// open; each call checks that the handle is still live (a Force Close
// Handles or an expired owner closes it: ErrFileClosed) and loads the
// entry by its file ID, so renames by either protocol are followed.
//
// Errors are the sentinels of smbopen.go (test with errors.Is; they may be
// wrapped with details), or refusals the domain leaves to the door
// (*Refusal with a nil Err), which the SMB view answers with sentinels.
// Each sentinel names the NTSTATUS the SMB server answers with; the SMB
// front end maps them (internal/smb, ntstatus.go). Anything else is a
// storage fault (STATUS_UNSUCCESSFUL or a dropped connection, at the
// server's choice).

// Reads at or past the end of file return io.EOF:
// STATUS_END_OF_FILE (0xC0000011).

// MaxIOSize is the largest Read or Write Opens accepts: the SMB server
// offers it as MaxReadSize and MaxWriteSize. It equals the chunk size of
// the byte layer, so a large sequential SMB write becomes one extent part
// per request.
const MaxIOSize = extent.ChunkMax

// Opens is the File domain's API for the SMB opens of one front end: its
// owner id is the liveness identity of every handle it opens (see
// Heartbeat). The SMB view (internal/smb/smbfs) adapts it to the
// FileSystem internal/smb defines: it answers the refusals Opens leaves
// to the door (a *Refusal whose Err is nil) with their sentinels. Opens
// holds no state besides its owner; it is safe for concurrent use.
type Opens struct {
	s     *Service
	owner string
}

// Opens returns the open-based API of the service for the front end
// named owner (a non-empty id unique among live front ends, e.g.
// "smb@host:pid"). Opens need a live heartbeat of owner: call Heartbeat
// first.
func (s *Service) Opens(owner string) *Opens { return &Opens{s: s, owner: owner} }

// Owner returns the owner id.
func (v *Opens) Owner() string { return v.owner }

// Now returns the service clock's time (the time every decision on an
// open uses).
func (v *Opens) Now() time.Time { return v.s.clock.Now() }

// Heartbeat records that the owner is alive until until (by the service
// clock). The front end calls it well before the previous expiry, e.g.
// every 10 s with until = now + 30 s. If the previous heartbeat had
// expired, the owner's earlier handles stay dead: a front end that lost
// its liveness must treat all its opens as closed.
func (v *Opens) Heartbeat(ctx context.Context, until time.Time) error {
	if v.owner == "" {
		return fmt.Errorf("%w: empty owner", ErrInvalidParameter)
	}
	return v.s.store.Update(ctx, func(tx kv.Tx) error {
		return handle.Heartbeat(tx, v.s.clock.Now(), v.owner, until)
	})
}

// Retire ends the owner at once (a clean shutdown): its handles are dead
// from now on (they no longer block anyone), and the service's background
// reaper deletes them, applying their delete-on-close.
func (v *Opens) Retire(ctx context.Context) error {
	return v.s.store.Update(ctx, func(tx kv.Tx) error {
		return handle.Retire(tx, v.owner)
	})
}

// ShareExists reports whether the live share exists and is an SMB share
// (NFS shares are not reachable over SMB (inferred)). Share names are lower
// case (Azure's rule): the caller lower-cases a tree-connect name.
func (v *Opens) ShareExists(ctx context.Context, acct, sh string) (bool, error) {
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		_, err := smbShare(tx, acct, sh)
		return err
	})
	if errors.Is(err, ErrShareNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Shares lists the account's live SMB shares in name order (for the
// server's share enumeration).
func (v *Opens) Shares(ctx context.Context, acct string) ([]string, error) {
	var out []string
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		out = out[:0]
		pre := sharesPrefix(acct)
		var derr error
		err := tx.Scan(pre, kv.PrefixEnd(pre), 0, false, func(k, val []byte) bool {
			parts, ok := kv.Split(k)
			if !ok || len(parts) != 4 || parts[3] != "" {
				return true // a snapshot
			}
			var rec struct {
				Protocols string `json:"p"`
			}
			if derr = json.Unmarshal(val, &rec); derr != nil {
				return false
			}
			if rec.Protocols != ProtoNFS {
				out = append(out, parts[2])
			}
			return true
		})
		if err == nil {
			err = derr
		}
		return err
	})
	return out, err
}

// FSInfo is a share's size and volume information.
type FSInfo struct {
	// QuotaBytes is the share's quota (its size as SMB reports it).
	QuotaBytes int64
	// UsedBytes is the sum of the file sizes (Get Share Stats).
	UsedBytes int64
	// Created is the share's creation time (the volume creation time).
	Created time.Time
}

// FSInfo returns the share's quota, usage and creation time (FS size and
// volume information). Its cost grows with the number of entries of the
// share.
func (v *Opens) FSInfo(ctx context.Context, acct, sh string) (FSInfo, error) {
	var fi FSInfo
	err := v.s.store.View(ctx, func(tx kv.Tx) error {
		rec, err := smbShare(tx, acct, sh)
		if err != nil {
			return err
		}
		used, err := shareUsage(tx, acct, sh)
		if err != nil {
			return err
		}
		fi = FSInfo{QuotaBytes: int64(rec.Quota) << 30, UsedBytes: used, Created: rec.Created}
		return nil
	})
	return fi, err
}
