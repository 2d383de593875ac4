package xsm

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

const (
	hBody          = "x-ms-structured-body"
	hBodyKey       = "X-Ms-Structured-Body" // hBody in canonical form: looked up without a copy
	hContentLength = "x-ms-structured-content-length"
)

// parseBodyType checks an x-ms-structured-body value: XSM/1.0 with the
// crc64 property, the only one Azure defines ("Structured Body Format");
// the SDKs send exactly HeaderValue. Anything else is 400
// InvalidHeaderValue (inferred).
func parseBodyType(v string) error {
	parts := strings.Split(v, ";")
	if len(parts) == 2 && strings.EqualFold(strings.TrimSpace(parts[0]), "XSM/1.0") &&
		strings.EqualFold(strings.ReplaceAll(parts[1], " ", ""), "properties=crc64") {
		return nil
	}
	return azerr.InvalidHeader(hBody, v)
}

// DecodeRequest prepares a write whose body may be a structured message:
// when hr carries x-ms-structured-body, it checks that header and
// x-ms-structured-content-length (required then: 400
// MissingRequiredHeader), reads the message header (Decoder.Start), and
// replaces hr.Body with the decoded content and hr.ContentLength with the
// content's length, so the write path stores the content only, streaming.
// It returns nil and changes nothing for a plain body.
func DecodeRequest(hr *http.Request) (*Decoder, error) {
	v := hr.Header.Get(hBodyKey)
	if v == "" {
		return nil, nil
	}
	if err := parseBodyType(v); err != nil {
		return nil, err
	}
	cl := hr.Header.Get(hContentLength)
	if cl == "" {
		return nil, azerr.MissingHeader(hContentLength)
	}
	n, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || n < 0 {
		return nil, azerr.InvalidHeader(hContentLength, cl)
	}
	msgLen := hr.ContentLength
	if msgLen < 0 {
		msgLen = -1
	}
	d := NewDecoder(hr.Body, msgLen, n)
	if err := d.Start(); err != nil {
		return nil, err
	}
	hr.Body = decodedBody{d, hr.Body}
	hr.ContentLength = n
	return d, nil
}

type decodedBody struct {
	*Decoder
	orig interface{ Close() error }
}

func (b decodedBody) Close() error { return b.orig.Close() }

// Acknowledge wraps w so that a successful answer to the structured write
// d decoded carries x-ms-structured-body (the SDKs check the service
// echoes it: azure-sdk-for-python #36858) and the content's
// x-ms-content-crc64, the CRC64 the message trailer carried and the
// decoder checked. It returns w itself when d is nil.
func Acknowledge(w http.ResponseWriter, d *Decoder) http.ResponseWriter {
	if d == nil {
		return w
	}
	return &ackWriter{ResponseWriter: w, d: d}
}

type ackWriter struct {
	http.ResponseWriter
	d     *Decoder
	wrote bool
}

func (a *ackWriter) WriteHeader(code int) {
	if !a.wrote {
		a.wrote = true
		if code >= 200 && code < 300 && a.d.Done() {
			h := a.Header()
			h.Set(hBodyKey, HeaderValue)
			h.Set("x-ms-content-crc64", a.d.CRC64())
		}
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *ackWriter) Write(b []byte) (int, error) {
	if !a.wrote {
		a.WriteHeader(http.StatusOK)
	}
	return a.ResponseWriter.Write(b)
}

func (a *ackWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// Wanted reports whether a read asks for a structured response
// (x-ms-structured-body on Get Blob, Get File, Data Lake Read); a value
// other than XSM/1.0; properties=crc64 is 400 InvalidHeaderValue. A
// request asking also for a transactional range MD5 or CRC64 is 400
// InvalidHeaderValue (inferred: the structured response carries its own
// CRC64s, and the SDKs never send both).
func Wanted(h http.Header) (bool, error) {
	v := h.Get(hBodyKey)
	if v == "" {
		return false, nil
	}
	if err := parseBodyType(v); err != nil {
		return false, err
	}
	for _, name := range [...]string{"X-Ms-Range-Get-Content-Md5", "X-Ms-Range-Get-Content-Crc64"} {
		if b, _ := strconv.ParseBool(h.Get(name)); b {
			return false, azerr.InvalidHeader(strings.ToLower(name), h.Get(name))
		}
	}
	return true, nil
}

// ResponseWriter frames a read's body as a structured message: Respond
// sets the headers, Write encodes, Close ends the message.
type ResponseWriter struct {
	http.ResponseWriter
	enc *Encoder
}

// Respond sets on w's headers what a structured response of n content
// bytes answers: x-ms-structured-body, x-ms-structured-content-length
// (n) and a Content-Length of the whole message, the rest (Content-Range
// among them) describing the content as for a plain read. Call it after
// the plain headers are set, before WriteHeader; write the content to
// the returned writer, then Close it.
func Respond(w http.ResponseWriter, n int64) *ResponseWriter {
	enc := NewEncoder(w, n, DefaultSegment)
	h := w.Header()
	h.Set(hBodyKey, HeaderValue)
	h.Set(hContentLength, strconv.FormatInt(n, 10))
	h.Set("Content-Length", strconv.FormatInt(enc.Len(), 10))
	return &ResponseWriter{ResponseWriter: w, enc: enc}
}

func (r *ResponseWriter) Write(b []byte) (int, error) { return r.enc.Write(b) }

// Close writes the end of the message.
func (r *ResponseWriter) Close() error { return r.enc.Close() }

// Serve answers a read of n content bytes as a structured response:
// Respond's headers, status, the content send writes to the framing
// writer, and the end of the message. As with a plain body, a failure
// after the status line aborts the connection (http.ErrAbortHandler), so
// the client sees a cut message, never a short success.
func Serve(w http.ResponseWriter, hr *http.Request, status int, n int64, send func(http.ResponseWriter)) {
	sw := Respond(w, n)
	w.WriteHeader(status)
	send(sw)
	if hr.Method == http.MethodHead {
		return
	}
	if err := sw.Close(); err != nil {
		panic(http.ErrAbortHandler)
	}
}
