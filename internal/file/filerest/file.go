package filerest

import (
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/cerulean-storage/cerulean/internal/xsm"
)

// propHeaders are the request headers of a file's HTTP properties.
var propHeaders = []string{"x-ms-content-type", "x-ms-content-encoding", "x-ms-content-language", "x-ms-content-disposition", "x-ms-cache-control", "x-ms-content-md5"}

// parseProps reads the x-ms-content-* and x-ms-cache-control headers of
// Create File and Set File Properties. any reports whether one was sent: Set
// File Properties replaces all of them (absent ones are cleared (azfile
// recordings TestFileGetSetPropertiesDefault)) except on a resize-only
// request, which keeps them (azfile recorded test TestResizeFile).
func parseProps(h http.Header) (p file.Props, any bool, err error) {
	for _, name := range propHeaders {
		if _, ok := h[http.CanonicalHeaderKey(name)]; ok {
			any = true
		}
	}
	p = file.Props{
		ContentType:        h.Get("X-Ms-Content-Type"),
		ContentEncoding:    h.Get("X-Ms-Content-Encoding"),
		ContentLanguage:    h.Get("X-Ms-Content-Language"),
		ContentDisposition: h.Get("X-Ms-Content-Disposition"),
		CacheControl:       h.Get("X-Ms-Cache-Control"),
	}
	if v := h.Get("X-Ms-Content-Md5"); v != "" {
		md, err := wire.ParseContentMD5(v)
		if err != nil {
			return p, any, azerr.InvalidHeader("x-ms-content-md5", v)
		}
		p.ContentMD5 = md
	}
	return p, any, nil
}

// parseSize reads a file size header (x-ms-content-length): 0 to 4 TiB.
func parseSize(h http.Header, name string, required bool) (int64, bool, error) {
	v := h.Get(name)
	if v == "" {
		if required {
			return 0, false, azerr.MissingHeader(name)
		}
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, azerr.InvalidHeader(name, v)
	}
	if n < 0 || n > file.MaxFileSize {
		// The service's answer to a negative size as well (azfile
		// recording TestFileResizeInvalidSizeNegative).
		return 0, false, azerr.Newf(azerr.OutOfRangeInput, "The file size exceeds the maximum permissible limit.")
	}
	return n, true, nil
}

func (s *Service) createFile(r *req) (server.Response, error) {
	if t := wire.Field(r.Header, "X-Ms-Type"); !strings.EqualFold(t, "file") {
		if t == "" {
			return server.Response{}, azerr.MissingHeader("x-ms-type")
		}
		return server.Response{}, azerr.InvalidHeader("x-ms-type", t)
	}
	size, _, err := parseSize(r.Header, "x-ms-content-length", true)
	if err != nil {
		return server.Response{}, err
	}
	p, _, err := parseProps(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if p.ContentType == "" {
		p.ContentType = "application/octet-stream" // the documented default
	}
	// Since 2026-06-06 Create File may carry the first bytes of the file
	// (at most 4 MiB, written at offset 0) (azfile recording
	// TestFileCreateDataPrecalculatedChecksum).
	var st *extent.Staged
	var sent extent.Digests
	if r.ContentLength > 0 || wire.Field(r.Header, "Transfer-Encoding") != "" {
		if r.ContentLength > file.MaxRangeWrite {
			return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
		}
		if r.ContentLength > size {
			return server.Response{}, azerr.New(azerr.InvalidRange)
		}
		body, err := extent.LimitBody(r.Body, r.ContentLength, file.MaxRangeWrite)
		if err != nil {
			return server.Response{}, err
		}
		if sent, err = server.ParseDigests(r.Header); err != nil {
			return server.Response{}, err
		}
		if st, err = s.f.Data().Stage(r.Context(), body, r.ContentLength, sent, true); err != nil {
			return server.Response{}, err
		}
		// Freed at once if the request is refused before CreateFile,
		// which finishes it (a second Finish removes nothing).
		defer st.Finish(r.Context(), false)
		if st.Size > size {
			return server.Response{}, azerr.New(azerr.InvalidRange)
		}
		if err := st.CheckDigests(sent); err != nil {
			return server.Response{}, err
		}
	}
	meta, smb, err := parseCreate(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.CreateFile(r.Context(), file.CreateFileInput{Ref: refOf(r), Size: size, Props: p, Data: st, Meta: meta, SMB: smb, NoReplace: createOnly(r)})
	if err != nil {
		return server.Response{}, err
	}
	resp := entryWritten(out.Entry, http.StatusCreated)
	if st != nil {
		server.SetDigestHeaders(&resp, st.Digests())
	}
	return resp, nil
}

// setFileHeaders sets the property headers of Get File and Get File
// Properties.
func setFileHeaders(h *server.Response, e *file.Entry, now time.Time) {
	setEntryProps(h, e)
	// Without a type the service sends none (and Render has net/http
	// sniff none from Get File's content).
	if e.Props.ContentType != "" {
		h.Set("Content-Type", e.Props.ContentType)
	}
	for name, v := range map[string]string{
		"Content-Encoding":    e.Props.ContentEncoding,
		"Content-Language":    e.Props.ContentLanguage,
		"Content-Disposition": e.Props.ContentDisposition,
		"Cache-Control":       e.Props.CacheControl,
	} {
		if v != "" {
			h.Set(name, v)
		}
	}
	h.Set("Accept-Ranges", "bytes")
	h.Set("X-Ms-Type", "File")
	h.Set("X-Ms-Server-Encrypted", "true")
	eff := e.Lease.Effective(now)
	h.Set(lease.HeaderLeaseState, eff.State)
	h.Set(lease.HeaderLeaseStatus, eff.Status)
	if eff.Duration != "" {
		h.Set("X-Ms-Lease-Duration", eff.Duration)
	}
	if c := e.Copy; c != nil {
		h.Set("X-Ms-Copy-Id", c.ID)
		h.Set("X-Ms-Copy-Source", c.Source)
		h.Set("X-Ms-Copy-Status", c.Status)
		h.Set("X-Ms-Copy-Progress", c.Progress)
		h.Set("X-Ms-Copy-Completion-Time", wire.FormatHTTPDate(c.Completion))
		if c.Desc != "" {
			h.Set("X-Ms-Copy-Status-Description", c.Desc)
		}
	}
}

func (s *Service) getFileProperties(r *req) (server.Response, error) {
	out, err := s.f.GetFileProperties(r.Context(), file.GetFilePropertiesInput{Ref: refOf(r)})
	if err != nil {
		return server.Response{}, err
	}
	e := out.Entry
	resp := server.Response{Status: http.StatusOK, Header: make([]server.HeaderField, 0, fileHeaders+len(e.Meta))}
	setFileHeaders(&resp, e, r.Now)
	server.ApplySASOverrides(&resp, r.sas)
	resp.Set("Content-Length", strconv.FormatInt(e.Size, 10))
	if e.Props.ContentMD5 != nil {
		resp.Set("Content-Md5", base64.StdEncoding.EncodeToString(e.Props.ContentMD5))
	}
	return resp, nil
}

// fileHeaders is room for the headers of Get File and Get File
// Properties but the metadata.
const fileHeaders = 32

func (s *Service) getFile(r *req) (server.Response, error) {
	// Like Get Blob, a malformed range is ignored and the whole file
	// returned (see wire.ParseRange).
	rng, err := wire.ParseRange(r.Header)
	if err != nil {
		rng = nil
	}
	wantMD5 := false
	if v := wire.Field(r.Header, "X-Ms-Range-Get-Content-Md5"); v != "" {
		if wantMD5, err = strconv.ParseBool(v); err != nil {
			return server.Response{}, azerr.InvalidHeader("x-ms-range-get-content-md5", v)
		}
	}
	if wantMD5 && rng == nil {
		return server.Response{}, azerr.Newf(azerr.InvalidHeaderValue, "x-ms-range-get-content-md5 requires a range.").With("HeaderName", "x-ms-range-get-content-md5").With("HeaderValue", "true")
	}
	structured, err := xsm.Wanted(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	in := file.GetFileInput{Ref: refOf(r), Range: rng, RangeMD5: wantMD5}
	if wantMD5 {
		in.Limit = file.MaxRangeWrite
	}
	out, err := s.f.GetFile(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	e, off, n, body := out.Entry, out.Offset, out.Length, out.Body
	// Render streams the content (framed when structured) and closes it.
	resp := server.Response{Status: http.StatusOK, Content: body, Structured: structured, Header: make([]server.HeaderField, 0, fileHeaders+len(e.Meta))}
	setFileHeaders(&resp, e, r.Now)
	server.ApplySASOverrides(&resp, r.sas)
	server.SetContentHeaders(&resp, body, wantMD5 && rng != nil)
	if rng != nil {
		resp.Status = http.StatusPartialContent
		resp.Set("Content-Range", wire.ContentRange(off, n, e.Size))
		if e.Props.ContentMD5 != nil {
			resp.Set("X-Ms-Content-Md5", base64.StdEncoding.EncodeToString(e.Props.ContentMD5))
		}
	} else if e.Props.ContentMD5 != nil {
		resp.Set("Content-Md5", base64.StdEncoding.EncodeToString(e.Props.ContentMD5))
	}
	return resp, nil
}

func (s *Service) deleteFile(r *req) (server.Response, error) {
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	if _, err := s.f.DeleteFile(r.Context(), file.DeleteFileInput{Ref: refOf(r)}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusAccepted), nil
}

func (s *Service) setFileProperties(r *req) (server.Response, error) {
	size, resize, err := parseSize(r.Header, "x-ms-content-length", false)
	if err != nil {
		return server.Response{}, err
	}
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	p, anyProps, err := parseProps(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	smb, err := parseSMB(r.Header, false)
	if err != nil {
		return server.Response{}, err
	}
	in := file.SetFilePropertiesInput{Ref: refOf(r), Resize: resize, Size: size, SMB: smb}
	if anyProps || !resize {
		// A resize-only request keeps the HTTP properties (see parseProps).
		in.Props = &p
	}
	out, err := s.f.SetFileProperties(r.Context(), in)
	if err != nil {
		return server.Response{}, err
	}
	return entryWritten(out.Entry, http.StatusOK), nil
}

func (s *Service) setFileMetadata(r *req) (server.Response, error) {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	if err := requireEmptyBody(r); err != nil {
		return server.Response{}, err
	}
	out, err := s.f.SetFileMetadata(r.Context(), file.SetFileMetadataInput{Ref: refOf(r), Meta: meta})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Bodiless(http.StatusOK)
	setETag(&resp, out.Entry)
	resp.Set("X-Ms-Request-Server-Encrypted", "true")
	return resp, nil
}

// parseWriteRange parses the destination range of Put Range and Put Range
// From URL: x-ms-range (or Range) "bytes=s-e", at most 4 MiB.
func parseWriteRange(h http.Header) (off, n int64, err error) {
	rng, err := wire.ParseRange(h)
	if err != nil {
		return 0, 0, err
	}
	if rng == nil {
		return 0, 0, azerr.MissingHeader(wire.HeaderXMsRange)
	}
	if rng.Open() {
		return 0, 0, azerr.InvalidHeader(wire.HeaderXMsRange, rng.String())
	}
	off, n = rng.Start, rng.End-rng.Start+1
	if n > file.MaxRangeWrite {
		return 0, 0, azerr.New(azerr.RequestBodyTooLarge)
	}
	return off, n, nil
}

// lastWriteMode reads x-ms-file-last-write-time of Put Range: "now"
// (default) or "preserve".
func lastWriteMode(h http.Header) (preserve bool, err error) {
	switch v := h.Get("X-Ms-File-Last-Write-Time"); strings.ToLower(v) {
	case "", "now":
		return false, nil
	case "preserve":
		return true, nil
	default:
		return false, azerr.InvalidHeader("x-ms-file-last-write-time", v)
	}
}

func (s *Service) putRange(r *req) (server.Response, error) {
	off, n, err := parseWriteRange(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	preserve, err := lastWriteMode(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	var st *extent.Staged
	var out file.EntryOutput
	switch mode := wire.Field(r.Header, "X-Ms-Write"); strings.ToLower(mode) {
	case "update":
		if r.ContentLength != n {
			return server.Response{}, azerr.Newf(azerr.InvalidHeaderValue, "The range length must equal the Content-Length.").With("HeaderName", "Content-Length").With("HeaderValue", strconv.FormatInt(r.ContentLength, 10))
		}
		if strings.EqualFold(strings.TrimSpace(wire.Field(r.Header, "Expect")), "100-continue") {
			if err := s.f.CheckPutRange(r.Context(), file.PutRangeInput{Ref: refOf(r), Offset: off, Length: n}); err != nil {
				return server.Response{}, err
			}
		}
		body, err := extent.LimitBody(r.Body, n, file.MaxRangeWrite)
		if err != nil {
			return server.Response{}, err
		}
		sent, err := server.ParseDigests(r.Header)
		if err != nil {
			return server.Response{}, err
		}
		// MD5 is always computed: Put Range returns Content-MD5 even when
		// the client sent none (azfile recording
		// TestClearRangeNonDefaultCount).
		if st, err = s.f.Data().Stage(r.Context(), body, n, sent, true); err != nil {
			return server.Response{}, err
		}
		// Freed at once if the request is refused before PutRange, which
		// finishes it (a second Finish removes nothing).
		defer st.Finish(r.Context(), false)
		if err := st.CheckDigests(sent); err != nil {
			return server.Response{}, err
		}
		out, err = s.f.PutRange(r.Context(), file.PutRangeInput{Ref: refOf(r), Offset: off, Length: n, Data: st, PreserveLastWrite: preserve})
		if err != nil {
			return server.Response{}, err
		}
	case "clear":
		if err := requireEmptyBody(r); err != nil {
			return server.Response{}, err
		}
		if out, err = s.f.ClearRange(r.Context(), file.ClearRangeInput{Ref: refOf(r), Offset: off, Length: n, PreserveLastWrite: preserve}); err != nil {
			return server.Response{}, err
		}
	case "":
		return server.Response{}, azerr.MissingHeader("x-ms-write")
	default:
		return server.Response{}, azerr.InvalidHeader("x-ms-write", mode)
	}
	e := out.Entry
	h := server.Response{Status: http.StatusCreated, Header: make([]server.HeaderField, 0, 6)}
	setETag(&h, e)
	h.Set("X-Ms-File-Last-Write-Time", formatTime(e.SMB.LastWrite))
	if st != nil {
		server.SetDigestHeaders(&h, st.Digests())
		h.Set("X-Ms-Request-Server-Encrypted", "true")
	}
	return h, nil
}

type fileRangeXML struct {
	XMLName xml.Name
	Start   int64 `xml:"Start"`
	End     int64 `xml:"End"`
}

type rangeListXML struct {
	XMLName xml.Name       `xml:"Ranges"`
	Ranges  []fileRangeXML `xml:",any"`
}

func (s *Service) listRanges(r *req) (server.Response, error) {
	rng, err := wire.ParseRange(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	prevSnap := r.q.Get("prevsharesnapshot")
	if prevSnap != "" {
		t, err := wire.ParseSnapshot(prevSnap)
		if err != nil {
			return server.Response{}, azerr.InvalidQuery("prevsharesnapshot", prevSnap)
		}
		prevSnap = wire.FormatISO7(t)
	}
	got, err := s.f.ListRanges(r.Context(), file.ListRangesInput{Ref: refOf(r), Range: rng, PrevSnapshot: prevSnap})
	if err != nil {
		return server.Response{}, err
	}
	e, spans := got.Entry, got.Spans
	out := rangeListXML{Ranges: []fileRangeXML{}}
	for _, sp := range spans {
		name := "Range"
		if sp.Clear {
			name = "ClearRange"
		}
		out.Ranges = append(out.Ranges, fileRangeXML{XMLName: xml.Name{Local: name}, Start: sp.Off, End: sp.End - 1})
	}
	resp, err := server.XML(http.StatusOK, out)
	if err != nil {
		return server.Response{}, err
	}
	setETag(&resp, e)
	resp.Set("X-Ms-Content-Length", strconv.FormatInt(e.Size, 10))
	return resp, nil
}
