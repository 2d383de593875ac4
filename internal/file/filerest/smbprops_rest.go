package filerest

// The REST side of the SMB properties (file/smbprops.go): their
// x-ms-file-* request headers parsed into the typed SMBRequest and
// file.FileTime values the domain applies, and the response headers rendered from an Entry. Create File,
// Create Directory, Set File/Directory Properties, Rename and Copy File
// (copy.go) read them; the properties reads and List (list.go) render them.

import (
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// readFileTime reads header name of h: "now", "preserve" or an RFC 3339
// time; def is the value used when the header is absent. A malformed
// value is not an error yet: the domain reports it (file.FileTime).
func readFileTime(h http.Header, name, def string) file.FileTime {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		v = def
	}
	ft := file.FileTime{Name: name, Raw: v}
	switch strings.ToLower(v) {
	case "now":
		ft.Now = true
	case "preserve":
		ft.Preserve = true
	default:
		t, err := time.Parse(time.RFC3339Nano, v)
		ft.At, ft.Bad = t.UTC(), err != nil
	}
	return ft
}

// maxPermHeader is the largest SDDL accepted in x-ms-file-permission; larger
// permissions go through Create Permission (Create File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-file,
// x-ms-file-permission).
const maxPermHeader = 8 << 10

// parseSMB reads the SMB property headers. create selects the defaults of
// Create File/Directory ("now", "inherit") over those of Set Properties
// ("preserve").
func parseSMB(h http.Header, create bool) (*file.SMBRequest, error) {
	timeDef := "preserve"
	if create {
		timeDef = "now"
	}
	sr := &file.SMBRequest{Create: create,
		Created:   readFileTime(h, "x-ms-file-creation-time", timeDef),
		LastWrite: readFileTime(h, "x-ms-file-last-write-time", timeDef),
		Changed:   readFileTime(h, "x-ms-file-change-time", "now"),
	}
	if v := strings.TrimSpace(h.Get("X-Ms-File-Attributes")); v != "" && !strings.EqualFold(v, "preserve") {
		a, ok := file.ParseAttributes(v)
		if !ok {
			return nil, azerr.InvalidHeader("x-ms-file-attributes", v)
		}
		sr.Attrs = &a
	}
	perm := h.Get("X-Ms-File-Permission")
	key := h.Get("X-Ms-File-Permission-Key")
	switch {
	case perm != "" && key != "":
		return nil, azerr.Newf(azerr.InvalidHeaderValue, "Only one of x-ms-file-permission and x-ms-file-permission-key may be specified.").With("HeaderName", "x-ms-file-permission")
	case strings.EqualFold(perm, "inherit"):
		sr.Inherit = true
	case strings.EqualFold(perm, "preserve"):
		if create {
			return nil, azerr.InvalidHeader("x-ms-file-permission", perm)
		}
	case perm != "":
		if len(perm) > maxPermHeader {
			return nil, azerr.Newf(azerr.InvalidHeaderValue, "The permission is larger than 8 KiB; use Create Permission and x-ms-file-permission-key.").With("HeaderName", "x-ms-file-permission")
		}
		if !file.ValidSDDL(perm) {
			return nil, azerr.New(azerr.FileInvalidPermission)
		}
		sr.Perm = perm
	case key != "":
		sr.PermKey = key
	default:
		sr.Inherit = create
	}
	if f := h.Get("X-Ms-File-Permission-Format"); f != "" && !strings.EqualFold(f, "sddl") {
		return nil, azerr.InvalidHeader("x-ms-file-permission-format", f)
	}
	return sr, nil
}

// setSMBHeaders sets the SMB properties and IDs of e.
func setSMBHeaders(resp *server.Response, e *file.Entry) {
	resp.Set("X-Ms-File-Attributes", e.SMB.Attrs.String())
	resp.Set("X-Ms-File-Creation-Time", formatTime(e.SMB.Created))
	resp.Set("X-Ms-File-Last-Write-Time", formatTime(e.SMB.LastWrite))
	resp.Set("X-Ms-File-Change-Time", formatTime(e.SMB.Changed))
	resp.Set("X-Ms-File-Permission-Key", e.SMB.PermKey)
	resp.Set("X-Ms-File-Id", file.FormatID(e.ID))
	resp.Set("X-Ms-File-Parent-Id", file.FormatID(e.Parent))
}

// entryWritten is the answer to a write that changed e's SMB properties
// (create, set properties): ETag, Last-Modified, the SMB headers and the
// encryption flag, with status.
func entryWritten(e *file.Entry, status int) server.Response {
	resp := server.Response{Status: status, Header: make([]server.HeaderField, 0, 12)}
	setETag(&resp, e)
	setSMBHeaders(&resp, e)
	resp.Set("X-Ms-Request-Server-Encrypted", "true")
	return resp
}

// parseCreate reads the metadata and SMB property headers of Create File
// and Create Directory.
func parseCreate(h http.Header) (map[string]string, *file.SMBRequest, error) {
	meta, err := wire.ParseMetadata(h)
	if err != nil {
		return nil, nil, err
	}
	smb, err := parseSMB(h, true)
	if err != nil {
		return nil, nil, err
	}
	return meta, smb, nil
}

// setEntryProps sets the headers every properties read of e carries:
// ETag, Last-Modified, the SMB properties and the metadata.
func setEntryProps(resp *server.Response, e *file.Entry) {
	setETag(resp, e)
	setSMBHeaders(resp, e)
	setMetadata(resp, e.Meta)
}
