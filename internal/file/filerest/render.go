// Small renderers the handlers share: ETag and Last-Modified, metadata,
// the x-ms-file-*-time format, the service endpoint of a listing.

package filerest

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// setETag sets ETag and Last-Modified.
func setETag(resp *server.Response, e *file.Entry) {
	resp.Set("Etag", e.ETag)
	resp.Set("Last-Modified", wire.FormatHTTPDate(e.Modified))
}

// boolOr returns *b, or def when b is nil.
func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// setShareETag sets ETag and Last-Modified of a share.
func setShareETag(resp *server.Response, sh *file.Share) {
	resp.Set("Etag", sh.ETag)
	resp.Set("Last-Modified", wire.FormatHTTPDate(sh.Modified))
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// setMetadata adds meta's x-ms-meta-* headers as wire.WriteMetadata
// writes them: the names keep their case (not canonicalised).
func setMetadata(resp *server.Response, meta map[string]string) {
	for k, v := range meta {
		resp.Header = append(resp.Header, server.HeaderField{Name: wire.MetaPrefix + k, Value: v})
	}
}

// serviceEndpoint is the account's File endpoint URL as the client
// addressed it.
func serviceEndpoint(r *req) string {
	return r.AccountURL() + "/"
}

// timeLayout is the x-ms-file-*-time format: ISO 8601 with seven
// fractional digits.
const timeLayout = "2006-01-02T15:04:05.0000000Z"
