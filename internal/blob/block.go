package blob

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc64"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

const maxCommittedBlocks = 50000

// putBlock is Put Block's REST handler.
func (s *Service) putBlock(w http.ResponseWriter, r *req) error {
	if err := wire.ValidBlobName(r.name); err != nil {
		return err
	}
	idParam, _, err := parseBlockID(r)
	if err != nil {
		return err
	}
	in := PutBlockInput{Call: r.call(), Ref: r.ref(), LeaseID: r.Header.Get("x-ms-lease-id"), BlockID: idParam, Body: r.Body,
		CheckFirst: strings.EqualFold(r.Header.Get("Expect"), "100-continue")}
	if in.Checksums, err = parseChecksums(r.Header); err != nil {
		return err
	}
	if in.Length, err = contentLength(r); err != nil {
		return err
	}
	out, err := s.PutBlock(r.Context(), in)
	if err != nil {
		return err
	}
	h := w.Header()
	echoDigests(h, out.ContentMD5, out.ContentCRC64)
	h.Set("x-ms-request-server-encrypted", strconv.FormatBool(out.ServerEncrypted))
	w.WriteHeader(http.StatusCreated)
	return nil
}

// parseBlockID reads Put Block's blockid parameter, as sent and decoded.
func parseBlockID(r *req) (string, []byte, error) {
	idParam := r.q.Get("blockid")
	if idParam == "" {
		return "", nil, azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "blockid")
	}
	rawID, err := wire.DecodeBlockID(idParam)
	return idParam, rawID, err
}

// blockWritable is Put Block's rule for the blob it stages to, one for
// both account kinds: the lease (lease.CheckWrite: an active lease must
// be named), the data online (onlineTier: 409 BlobArchived, as every
// write of an archived blob), and a block blob (409 InvalidBlobType).
func blockWritable(typ string, l lease.Lease, tier, leaseID string, now time.Time) error {
	if err := lease.CheckWrite(l, leaseID, lease.Blob, now); err != nil {
		return err
	}
	if err := onlineTier(tier); err != nil {
		return err
	}
	if typ != BlockBlob {
		return azerr.New(azerr.InvalidBlobType)
	}
	return nil
}

// stageBlock records block idParam (rawID decoded) of size bytes, held by
// parts, as an uncommitted block of the blob ref, after Put Block's
// checks (leaseID: the lease the caller holds, "" for none).
// blockTarget is stageBlock's read-only part: the container exists and
// the blob, if any, takes blocks under leaseID (on a hierarchical
// account, hns non-nil, the file: stagePath).
func blockTarget(tx kv.Tx, hns *ns.Namespace, ref BlobRef, leaseID string, now time.Time) error {
	if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
		return err
	}
	if hns != nil {
		return stagePath(tx, hns, ref, leaseID, now)
	}
	b, err := findBlob(tx, ref.Account, ref.Container, ref.Blob, "")
	switch {
	case err != nil:
		return err
	case b != nil:
		return blockWritable(b.Type, b.Lease, b.Tier, leaseID, now)
	case leaseID != "":
		return azerr.New(azerr.LeaseNotPresentWithBlobOperation)
	}
	return nil
}

func (s *Service) stageBlock(tx kv.Tx, ref BlobRef, leaseID string, now time.Time, rawID []byte, idParam string, size int64, parts []extent.Part, cpk string) error {
	if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
		return err
	}
	if hns := s.nsOf(ref.Account); hns != nil {
		// A file of a hierarchical account: its node holds the lease
		// and the tier (stagePath).
		if err := stagePath(tx, hns, ref, leaseID, now); err != nil {
			return err
		}
	} else if b, err := findBlob(tx, ref.Account, ref.Container, ref.Blob, ""); err != nil {
		return err
	} else if b != nil {
		if err := blockWritable(b.Type, b.Lease, b.Tier, leaseID, now); err != nil {
			return err
		}
	} else if leaseID != "" {
		return azerr.New(azerr.LeaseNotPresentWithBlobOperation)
	} else if err := s.settleDeletedBase(tx, ref, now, BlockBlob); err != nil {
		// Put Block on a soft-deleted blob starts a new blob: the
		// soft-deleted one becomes a soft-deleted snapshot of it.
		return err
	}
	prefix := blocksPrefix(ref.Account, ref.Container, ref.Blob)
	var sameLen = true
	// All block ids of a blob have one length, checked here against the
	// uncommitted blocks only (Put Block reference: "If a block is uploaded
	// with a block ID of a different length than the block IDs for any
	// existing uncommitted blocks, the service returns error response code
	// 400"): a blob committed with ids of one length can be rewritten with
	// ids of another, and Put Block List still refuses a list that mixes
	// them. The first uncommitted block tells the length (all have one);
	// skip the sequence record.
	if err := tx.Scan(prefix, kv.PrefixEnd(prefix), 2, false, func(k, v []byte) bool {
		parts, _ := kv.Split(k)
		if len(parts) != 5 || parts[4] == "" {
			return true
		}
		sameLen = blockIDLen(parts[4]) == len(rawID)
		return false
	}); err != nil {
		return err
	}
	if !sameLen {
		return azerr.Newf(azerr.InvalidBlobOrBlock, "The specified block ID length differs from the uncommitted block IDs.")
	}
	// Upload order: a per-blob counter, so blocks staged within one
	// clock tick (or by processes with skewed clocks) keep their order.
	var last uncommitted
	if _, err := kv.GetJSON(tx, blockSeqKey(ref.Account, ref.Container, ref.Blob), &last); err != nil {
		return err
	}
	seq := max(last.Seq+1, now.UnixNano())
	if err := kv.PutJSON(tx, blockSeqKey(ref.Account, ref.Container, ref.Blob), &uncommitted{Seq: seq}); err != nil {
		return err
	}
	key := blockKey(ref.Account, ref.Container, ref.Blob, idParam)
	var old uncommitted
	found, err := kv.GetJSON(tx, key, &old)
	if err != nil {
		return err
	}
	var oldParts []extent.Part
	if found {
		oldParts = old.Parts
	}
	if err := extent.AdjustRefs(tx, now, oldParts, parts); err != nil {
		return err
	}
	return kv.PutJSON(tx, key, &uncommitted{Size: size, Parts: parts, Seq: seq, CPK: cpk})
}

// blockSeqKey holds the last upload sequence number of a blob's
// uncommitted blocks. It lives among the blocks under the empty id (never a
// valid block id, and sorted first), so everything that drops the
// uncommitted blocks (Put Block List, Put Blob, Delete Blob, Delete
// Container) drops it too; readers of the blocks skip it.
func blockSeqKey(acct, c, name string) []byte { return blockKey(acct, c, name, "") }

func blockIDLen(b64 string) int {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return -1
	}
	return len(raw)
}

// putBlockList is Put Block List's REST handler.
func (s *Service) putBlockList(w http.ResponseWriter, r *req) error {
	if err := wire.ValidBlobName(r.name); err != nil {
		return err
	}
	newb, conds, err := parseNewBlob(r, BlockBlob)
	if err != nil {
		return err
	}
	if r.ContentLength > 8<<20 {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	if expectsContinue(r.Header) {
		if err := s.CheckPutBlockList(r.Context(), PutBlockListInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), CreateOnly: r.createOnly()}); err != nil {
			return err
		}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20+1))
	if err != nil {
		return extent.BodyErr(err)
	}
	if len(raw) > 8<<20 {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	sums, err := parseChecksums(r.Header)
	if err != nil {
		return err
	}
	digests, err := requestDigests(raw, sums)
	if err != nil {
		return err
	}
	refs, err := wire.ParseBlockList(raw)
	if err != nil {
		return err
	}
	out, err := s.PutBlockList(r.Context(), PutBlockListInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), CreateOnly: r.createOnly(), NewBlob: newb, Blocks: refs})
	if err != nil {
		return err
	}
	setETag(w, out.ETag, out.LastModified)
	digests(w.Header())
	w.Header().Set("x-ms-request-server-encrypted", strconv.FormatBool(out.ServerEncrypted))
	w.WriteHeader(http.StatusCreated)
	return nil
}

// requestDigests checks the Content-MD5 or x-ms-content-crc64 sent with
// a request body that is not content (Put Block List's block list)
// against raw, and returns what sets the answer's digest of it: the
// Content-MD5 when one was sent, x-ms-content-crc64 otherwise (Put Block
// List: "This header refers to the content of the request, meaning, in
// this case, the list of blocks"; the azure-sdk-for-js recording
// "stageBlockFromURL - destination bearer token" has x-ms-content-crc64
// GFi/o1BSQtU= and no Content-MD5 for a commit sent without one).
func requestDigests(raw []byte, sums Checksums) (func(http.Header), error) {
	md := md5Sum(raw)
	ch := crc64.New(extent.CRC64Table)
	_, _ = ch.Write(raw)
	crc := binary.LittleEndian.AppendUint64(nil, ch.Sum64())
	if err := (&extent.Staged{MD5: md, CRC64: crc}).CheckDigests(sums); err != nil {
		return nil, err
	}
	return func(h http.Header) {
		if sums.MD5 != nil {
			echoDigests(h, md, nil)
		} else {
			echoDigests(h, nil, crc)
		}
	}, nil
}

// getBlockList is Get Block List's REST handler.
func (s *Service) getBlockList(w http.ResponseWriter, r *req) error {
	lt, err := wire.ParseBlockListType(r.q.Get("blocklisttype"))
	if err != nil {
		return err
	}
	out, err := s.GetBlockList(r.Context(), GetBlockListInput{Call: r.call(), Ref: r.ref(), Access: r.readAccess()})
	if err != nil {
		return err
	}
	h := w.Header()
	if out.Exists {
		setETag(w, out.ETag, out.LastModified)
		h.Set("x-ms-blob-content-length", strconv.FormatInt(out.Size, 10))
	} else {
		// Only uncommitted blocks: no ETag or Last-Modified, and a
		// committed length of 0 (Get Block List, x-ms-blob-content-length).
		h.Set("x-ms-blob-content-length", "0")
	}
	// Only the requested sections, an empty one self-closed, as the real
	// service writes them.
	body := wire.BlockListXML(lt, out.Committed, out.Uncommitted)
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(body)
	return err
}
