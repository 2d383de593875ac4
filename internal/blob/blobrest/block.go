package blobrest

import (
	"encoding/binary"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// putBlock is Put Block's REST handler.
func (s *Service) putBlock(r *req) (server.Response, error) {
	if err := wire.ValidBlobName(r.name); err != nil {
		return server.Response{}, err
	}
	idParam, _, err := parseBlockID(r)
	if err != nil {
		return server.Response{}, err
	}
	in := blob.PutBlockInput{Call: r.call(), Ref: r.ref(), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), BlockID: idParam, Body: r.Body,
		CheckFirst: strings.EqualFold(wire.Field(r.Header, "Expect"), "100-continue")}
	if in.Checksums, err = parseChecksums(r.Header); err != nil {
		return server.Response{}, err
	}
	if in.Length, err = contentLength(r); err != nil {
		return server.Response{}, err
	}
	out, err := s.PutBlock(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 3)
	echoDigests(&resp, out.ContentMD5, out.ContentCRC64)
	resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(out.ServerEncrypted))
	return resp, nil
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

// putBlockList is Put Block List's REST handler.
func (s *Service) putBlockList(r *req) (server.Response, error) {
	if err := wire.ValidBlobName(r.name); err != nil {
		return server.Response{}, err
	}
	newb, conds, err := parseNewBlob(r, blob.BlockBlob)
	if err != nil {
		return server.Response{}, err
	}
	if r.ContentLength > 8<<20 {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	if expectsContinue(r.Header) {
		if err := s.CheckPutBlockList(r.Context(), blob.PutBlockListInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), CreateOnly: r.createOnly()}); err != nil {
			return server.Response{}, err
		}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20+1))
	if err != nil {
		return server.Response{}, extent.BodyErr(err)
	}
	if len(raw) > 8<<20 {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	sums, err := parseChecksums(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	digests, err := requestDigests(raw, sums)
	if err != nil {
		return server.Response{}, err
	}
	refs, err := wire.ParseBlockList(raw)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.PutBlockList(r.Context(), blob.PutBlockListInput{Call: r.call(), Ref: r.ref(), Access: r.access(conds), CreateOnly: r.createOnly(), NewBlob: newb, Blocks: refs})
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusCreated, 5)
	setETag(&resp, out.ETag, out.LastModified)
	server.SetDigestHeaders(&resp, digests)
	resp.Set("X-Ms-Request-Server-Encrypted", strconv.FormatBool(out.ServerEncrypted))
	setVersionID(&resp, out.VersionID)
	return resp, nil
}

// requestDigests checks the Content-MD5 or x-ms-content-crc64 sent with
// a request body that is not content (Put Block List's block list)
// against raw, and returns the answer's digest of it: the Content-MD5
// when one was sent, x-ms-content-crc64 otherwise (Put Block List: "This
// header refers to the content of the request, meaning, in this case,
// the list of blocks"; the azure-sdk-for-js recording
// "stageBlockFromURL - destination bearer token" has x-ms-content-crc64
// GFi/o1BSQtU= and no Content-MD5 for a commit sent without one).
func requestDigests(raw []byte, sums blob.Checksums) (extent.Digests, error) {
	md := md5Sum(raw)
	ch := extent.NewCRC64()
	_, _ = ch.Write(raw)
	crc := binary.LittleEndian.AppendUint64(nil, ch.Sum64())
	if err := (&extent.Staged{MD5: md, CRC64: crc}).CheckDigests(sums); err != nil {
		return extent.Digests{}, err
	}
	if sums.MD5 != nil {
		return extent.Digests{MD5: md}, nil
	}
	return extent.Digests{CRC64: crc}, nil
}

// getBlockList is Get Block List's REST handler.
func (s *Service) getBlockList(r *req) (server.Response, error) {
	lt, err := wire.ParseBlockListType(r.q.Get("blocklisttype"))
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.GetBlockList(r.Context(), blob.GetBlockListInput{Call: r.call(), Ref: r.ref(), Access: r.readAccess()})
	if err != nil {
		return server.Response{}, err
	}
	// Only the requested sections, an empty one self-closed, as the real
	// service writes them.
	body := wire.BlockListXML(lt, out.Committed, out.Uncommitted)
	resp := server.XMLDoc(http.StatusOK, body)
	resp.Header = make([]server.HeaderField, 0, 4)
	if out.Exists {
		setETag(&resp, out.ETag, out.LastModified)
		resp.Set("X-Ms-Blob-Content-Length", strconv.FormatInt(out.Size, 10))
	} else {
		// Only uncommitted blocks: no ETag or Last-Modified, and a
		// committed length of 0 (Get Block List, x-ms-blob-content-length).
		resp.Set("X-Ms-Blob-Content-Length", "0")
	}
	resp.Set("Content-Length", strconv.Itoa(len(body)))
	return resp, nil
}
