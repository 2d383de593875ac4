package blob

import (
	"crypto/md5"
	"encoding/base64"
	"errors"
	"github.com/cerulean-storage/cerulean/internal/auth"
	"net/http"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

const maxCopyFromURL = 256 << 20

// copySource parses x-ms-copy-source: a URL of a blob of this server,
// path-style or with the account in an Azure host name (see
// wire.SourcePath), optionally with ?snapshot=. The source may be in
// another account served here (acct differs from r.Account): see
// authorizeSource.
func copySource(r *req) (acct, container, name, snap string, err error) {
	raw := r.Header.Get("x-ms-copy-source")
	u, perr := url.Parse(raw)
	// A URL, not a path: "/account/container/blob" (the form before
	// version 2012-02-12) is 400 InvalidHeaderValue, as the service
	// answers it (Azure/azure-storage-node#594).
	if perr != nil || u.Path == "" || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", "", "", "", azerr.InvalidHeader("x-ms-copy-source", raw)
	}
	path, _ := wire.SourcePath(u, "blob")
	segs := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(segs) != 3 || segs[0] == "" || segs[1] == "" || segs[2] == "" {
		return "", "", "", "", azerr.New(azerr.InvalidSourceBlobURL)
	}
	snap = u.Query().Get("snapshot")
	if snap != "" {
		t, err := wire.ParseSnapshot(snap)
		if err != nil {
			return "", "", "", "", azerr.InvalidHeader("x-ms-copy-source", raw)
		}
		snap = wire.FormatISO7(t)
	}
	return segs[0], segs[1], blobName(segs[2]), snap, nil
}

// authorizeSource authorizes the blob source acct/cont/name of a copy
// (Copy Blob, Put Blob From URL, Put Block From URL, Append Block From
// URL, Put Page From URL). A source of the request's own account is
// covered by its Shared Key; with a SAS on the destination, the source
// needs its own SAS or public access. A source in another account is
// read as Azure reads one (Copy Blob reference, "Authorization": the
// source blob in another account must be public or authorized by a
// SAS): its SAS is verified with that account's keys and stored access
// policies.
func (s *Service) authorizeSource(r *req, acct, cont, name string) error {
	if v := r.Header.Get("x-ms-copy-source-authorization"); v != "" {
		// The source read with the caller's Entra ID token (Copy Blob
		// From URL, Put Blob From URL, Put Block From URL:
		// "x-ms-copy-source-authorization ... Only the bearer scheme is
		// supported"); a valid token reads any account here, as it
		// grants the whole account in the basic OAuth mode.
		return r.VerifySourceBearer(v, acct, auth.Blob)
	}
	if acct == r.Account {
		return s.authorizeCopySource(r, cont, name)
	}
	other := *r.Request
	other.Account = acct
	u, err := url.Parse(r.Header.Get("x-ms-copy-source"))
	if err != nil {
		return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source URL is not valid.").WithStatus(http.StatusForbidden)
	}
	ok, err := s.sourceReadable(&other, cont, name, u.Query())
	if err != nil || ok {
		return err
	}
	// No container there (or no such account on this server): the
	// source does not exist, 404 as for a missing source blob.
	err = s.store.View(r.Context(), func(tx kv.Tx) error {
		_, err := loadContainer(tx, acct, cont)
		return err
	})
	if azerr.Has(err, azerr.ContainerNotFound) {
		return azerr.Newf(azerr.CannotVerifyCopySource, "The specified blob does not exist.")
	}
	if err != nil {
		return err
	}
	return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source in another account is not public and carries no SAS.").WithStatus(http.StatusForbidden)
}

// copyBlob implements Copy Blob and Copy Blob From URL within the account.
// The copy completes inside the request (one transaction), so the
// response already reports x-ms-copy-status: success.
func (s *Service) copyBlob(w http.ResponseWriter, r *req) error {
	if err := wire.ValidBlobName(r.name); err != nil {
		return err
	}
	var srcAcct, srcC, srcName, srcSnap string
	fsrc := s.fileCopySource(r)
	if fsrc != nil {
		// A file of this account: the request's Shared Key authorizes
		// it, as it does a blob of the account; a SAS request needs a
		// SAS on the source.
		if err := fsrc.peer.AuthorizeCopySource(r.Request, fsrc.path, fsrc.q, true); err != nil {
			return err
		}
	} else {
		var err error
		if srcAcct, srcC, srcName, srcSnap, err = copySource(r); err != nil {
			return err
		}
		if err := s.authorizeSource(r, srcAcct, srcC, srcName); err != nil {
			return err
		}
	}
	sync, err := parseBoolHeader(r.Header, "x-ms-requires-sync")
	if err != nil {
		return err
	}
	conds, err := cond.Parse(r.Header)
	if err != nil {
		return err
	}
	srcConds, err := cond.ParseSource(r.Header)
	if err != nil {
		return err
	}
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return err
	}
	// Tags come from x-ms-tags; Copy Blob From URL may copy the source's
	// instead (x-ms-copy-source-tag-option: COPY).
	tags, copyTags, err := tagsForCopy(r, sync)
	if err != nil {
		return err
	}
	// Copy Blob From URL checks the source's bytes against
	// x-ms-source-content-md5 and then answers with that MD5 in
	// Content-MD5 (azure-sdk-for-go TestCopyBlockBlobFromURL: the
	// response's ContentMD5 equals the source's MD5; a wrong one fails).
	var srcMD5 []byte
	if v := r.Header.Get("x-ms-source-content-md5"); v != "" && sync {
		if srcMD5, err = base64.StdEncoding.DecodeString(v); err != nil || len(srcMD5) != md5.Size {
			return azerr.InvalidHeader("x-ms-source-content-md5", v)
		}
	}
	lookup := func(tx kv.Tx) (src *blobRec, err error) {
		if fsrc != nil {
			var readable func(off, n int64) error
			if src, readable, err = fsrc.record(tx, r); err == nil {
				err = readable(0, src.Size)
			}
			return src, err
		}
		return findBlob(tx, srcAcct, srcC, srcName, srcSnap)
	}
	// The source's bytes are hashed in a snapshot read first, so the
	// write transaction does not hold its lock while up to 256 MiB are
	// read; it hashes again only if the source changed in between.
	var hashed []extent.Part
	if srcMD5 != nil {
		err := s.store.View(r.Context(), func(tx kv.Tx) error {
			src, err := lookup(tx)
			if err != nil || src == nil || src.Tier == tierArchive || src.Size > maxCopyFromURL {
				return nil // the write transaction reports it
			}
			if _, err := s.hash(r.Context(), tx, &source{md5: srcMD5}, src.Parts, src.Size); err != nil {
				return err
			}
			hashed = src.Parts
			return nil
		})
		if err != nil {
			return err
		}
	}
	copyID := newUUID()
	var rec *blobRec
	err = s.store.Update(r.Context(), func(tx kv.Tx) error {
		if _, err := loadContainer(tx, r.Account, r.container); err != nil {
			return err
		}
		src, err := lookup(tx)
		if err != nil {
			return err
		}
		if src == nil {
			if _, err := loadContainer(tx, srcAcct, srcC); err != nil {
				return azerr.Newf(azerr.CannotVerifyCopySource, "The source container does not exist.")
			}
			return azerr.Newf(azerr.CannotVerifyCopySource, "The specified blob does not exist.")
		}
		if err := srcConds.CheckSource(src.ETag, src.Modified); err != nil {
			return err
		}
		if id := r.Header.Get("x-ms-source-lease-id"); id != "" && srcSnap == "" {
			if err := lease.CheckRead(src.Lease, id, lease.Blob, r.Now); err != nil {
				return err
			}
		}
		// A copy to an online tier is how an archived blob is read; the
		// copy completes at once (see tier.go).
		tier, err := requestTier(r.Header, src.Type)
		if err != nil {
			return err
		}
		if src.Tier == tierArchive && (sync || tier == "" || tier == tierArchive) {
			return azerr.New(azerr.BlobArchived)
		}
		if sync {
			if src.Type != BlockBlob {
				return azerr.New(azerr.InvalidSourceBlobType)
			}
			if src.Size > maxCopyFromURL {
				return azerr.Newf(azerr.CannotVerifyCopySource, "The source blob is larger than 256 MiB.").WithStatus(http.StatusRequestEntityTooLarge)
			}
		}
		if srcMD5 != nil && (hashed == nil || !extent.SameParts(src.Parts, hashed)) {
			if _, err := s.hash(r.Context(), tx, &source{md5: srcMD5}, src.Parts, src.Size); err != nil {
				return err
			}
		}
		nb := *src
		nb.Lease = lease.Lease{}
		nb.Tier, nb.TierChanged = tier, nil
		if !copyTags {
			nb.Tags = tags
		}
		// Both Copy Blob and Copy Blob From URL copy the source's metadata
		// unless the request gives x-ms-meta-* of its own.
		if len(meta) > 0 {
			nb.Meta = meta
		}
		nb.Parts = append([]extent.Part(nil), src.Parts...)
		nb.Blocks = append([]block(nil), src.Blocks...)
		nb.Copy = &CopyInfo{ID: copyID, Source: r.Header.Get("x-ms-copy-source"), Status: "success", Progress: progress(src.Size), Completion: r.Now}
		rec, err = s.replaceBlobIf(tx, r.ref(), r.access(conds), r.createOnly(), r.Now, &nb, func(old *blobRec) error {
			if old != nil && old.Type != src.Type && !sync {
				return azerr.New(azerr.InvalidBlobType)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return err
	}
	setETag(w, rec.ETag, rec.Modified)
	w.Header().Set("x-ms-copy-id", copyID)
	w.Header().Set("x-ms-copy-status", "success")
	if srcMD5 != nil {
		w.Header().Set("Content-MD5", base64.StdEncoding.EncodeToString(srcMD5))
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func progress(n int64) string {
	s := itoa(n)
	return s + "/" + s
}

// abortCopyBlob: copies complete synchronously, so there is never a
// pending copy to abort (409 NoPendingCopyOperation), after the usual
// existence and lease checks.
func (s *Service) abortCopyBlob(w http.ResponseWriter, r *req) error {
	if r.Header.Get("x-ms-copy-action") != "abort" {
		return azerr.InvalidHeader("x-ms-copy-action", r.Header.Get("x-ms-copy-action"))
	}
	id := r.q.Get("copyid")
	if id == "" {
		return azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "copyid")
	}
	return s.store.View(r.Context(), func(tx kv.Tx) error {
		b, err := loadBlob(tx, r.ref())
		if err != nil {
			return err
		}
		e := b.Lease.Effective(r.Now)
		if e.Duration == "infinite" || r.Header.Get("x-ms-lease-id") != "" {
			if err := lease.CheckWrite(b.Lease, r.Header.Get("x-ms-lease-id"), lease.Blob, r.Now); err != nil {
				return err
			}
		}
		if b.Copy == nil || b.Copy.Status != "pending" {
			return azerr.New(azerr.NoPendingCopyOperation)
		}
		if b.Copy.ID != id {
			return azerr.New(azerr.CopyIDMismatch)
		}
		return errors.New("abort copy: pending copies do not exist on this server")
	})
}
