package blobrest

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// parseExpiry reads x-ms-expiry-option and x-ms-expiry-time of Set Blob
// Expiry: milliseconds for the relative options, an RFC 1123 time for
// Absolute, nothing for NeverExpire.
func parseExpiry(h http.Header) (blob.SetBlobExpiryInput, error) {
	var in blob.SetBlobExpiryInput
	opt, v := strings.TrimSpace(h.Get("X-Ms-Expiry-Option")), strings.TrimSpace(h.Get("X-Ms-Expiry-Time"))
	if opt == "" {
		return in, azerr.MissingHeader("x-ms-expiry-option")
	}
	for _, o := range []blob.ExpiryOption{blob.ExpiryRelativeToNow, blob.ExpiryRelativeToCreation, blob.ExpiryAbsolute, blob.ExpiryNever} {
		if strings.EqualFold(opt, string(o)) {
			in.Option = o
		}
	}
	switch in.Option {
	case "":
		return in, azerr.InvalidHeader("x-ms-expiry-option", opt)
	case blob.ExpiryNever:
		if v != "" {
			return in, azerr.InvalidHeader("x-ms-expiry-time", v)
		}
		return in, nil
	}
	if v == "" {
		return in, azerr.MissingHeader("x-ms-expiry-time")
	}
	if in.Option == blob.ExpiryAbsolute {
		t, err := http.ParseTime(v)
		if err != nil {
			return in, azerr.InvalidHeader("x-ms-expiry-time", v)
		}
		in.At = t.UTC()
		return in, nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms < 0 || ms > int64(100*365*24*time.Hour/time.Millisecond) {
		return in, azerr.InvalidHeader("x-ms-expiry-time", v)
	}
	in.Relative = time.Duration(ms) * time.Millisecond
	return in, nil
}

// setBlobExpiry is Set Blob Expiry's REST handler: 200 with the file's
// ETag and Last-Modified, which the expiry does not change.
func (s *Service) setBlobExpiry(r *req) (server.Response, error) {
	in, err := parseExpiry(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	in.Call, in.Ref, in.LeaseID = r.call(), r.ref(), wire.Field(r.Header, "X-Ms-Lease-Id")
	out, err := s.SetBlobExpiry(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	resp := answer(http.StatusOK, 2)
	setETag(&resp, out.ETag, out.LastModified)
	return resp, nil
}
