package console

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// Inspector reads, without changing anything, what the REST API does not
// show. internal/app implements it over the domain services.
type Inspector interface {
	// QueueMessages lists a queue's unexpired messages, invisible ones
	// included, in the order put (at most limit).
	QueueMessages(ctx context.Context, account, queue string, limit int) ([]QueueMessage, error)
	// FileHandles lists the handles open on a share, SMB and REST alike.
	FileHandles(ctx context.Context, account, share string) ([]FileHandle, error)
	// BlobLease reads a blob's lease with its expiry or break time (a
	// hierarchical account's file: the lease its namespace node keeps);
	// ok is false when the blob is missing.
	BlobLease(ctx context.Context, account, container, blob string) (l BlobLease, ok bool, err error)
	// ContainerLease reads a container's lease likewise; ok is false
	// when the container is missing.
	ContainerLease(ctx context.Context, account, container string) (l BlobLease, ok bool, err error)
	// Changes returns the last n records of the account's change log,
	// newest first, and whether the blob change feed is on for it.
	Changes(ctx context.Context, account string, n int) (records []Change, on bool, err error)
}

// Change is one record of an account's change log (the blob change
// feed's) as the console shows it.
type Change struct {
	Seq           uint64    `json:"seq"`
	Time          time.Time `json:"time"`
	Type          string    `json:"type"`
	Subject       string    `json:"subject"`
	API           string    `json:"api"`
	ETag          string    `json:"etag,omitempty"`
	ContentLength int64     `json:"contentLength"`
	BlobType      string    `json:"blobType,omitempty"`
	RequestID     string    `json:"requestId,omitempty"`
}

// BlobLease is a blob's lease as the console shows it.
type BlobLease struct {
	State    string    `json:"state"`
	Status   string    `json:"status"`
	Duration string    `json:"duration"`
	Expires  time.Time `json:"expires,omitzero"`
	BreakAt  time.Time `json:"breakAt,omitzero"`
}

// QueueMessage is one message as the console shows it.
type QueueMessage struct {
	ID                 string    `json:"id"`
	Inserted           time.Time `json:"inserted"`
	Expires            time.Time `json:"expires"`
	NextVisible        time.Time `json:"nextVisible"`
	Visible            bool      `json:"visible"`
	DequeueCount       uint64    `json:"dequeueCount"`
	ReceiptOutstanding bool      `json:"receiptOutstanding"`
	Text               string    `json:"text"`
}

// FileHandle is one open handle as the console shows it.
type FileHandle struct {
	HandleID      string    `json:"handleId"`
	Path          string    `json:"path"`
	FileID        string    `json:"fileId"`
	SessionID     string    `json:"sessionId"`
	Client        string    `json:"client"`
	Opened        time.Time `json:"opened"`
	Access        string    `json:"access"`
	ShareMode     string    `json:"shareMode"`
	DeleteOnClose bool      `json:"deleteOnClose"`
	// DeletePending: the file is marked for deletion once its last
	// handle closes (SMB's delete disposition).
	DeletePending bool        `json:"deletePending"`
	Locks         []ByteRange `json:"locks"`
}

// ByteRange is one byte-range lock a handle holds.
type ByteRange struct {
	Offset    uint64 `json:"offset"`
	Length    uint64 `json:"length"`
	Exclusive bool   `json:"exclusive"`
}

// inspect serves the console's own endpoints under /x/{account}/:
//
//	GET /x/{account}/activity?n=100            the last requests
//	GET /x/{account}/queues/{queue}/messages   QueueMessages
//	GET /x/{account}/shares/{share}/handles    FileHandles
//	GET /x/{account}/containers/{c}/lease?blob=name  BlobLease
//	GET /x/{account}/containers/{c}/lease       ContainerLease
//	GET /x/{account}/changes?n=100               Changes
//	GET /x/{account}/rates                       Counts (every account's)
//
// each signed with Shared Key as a Blob request to /{account}/... is.
type inspect struct{ cfg Config }

func (x *inspect) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, "UnsupportedHttpVerb", "use GET")
		return
	}
	// Verified as the request the page signed: the path without /x.
	signed := r.Clone(r.Context())
	signed.URL.Path = strings.TrimPrefix(r.URL.Path, "/x")
	signed.URL.RawPath = ""
	if r.URL.RawPath != "" {
		signed.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, "/x")
	}
	signed.RequestURI = signed.URL.RequestURI()
	account, ok, err := auth.Authenticate(signed, auth.Blob, x.cfg.Accounts, clock.Wall(x.cfg.Clock).Now())
	if err == nil && !ok {
		err = azerr.New(azerr.AuthenticationFailed)
	}
	if err != nil {
		var ae *azerr.Error
		status, code := http.StatusForbidden, azerr.AuthenticationFailed
		if errors.As(err, &ae) {
			status, code = ae.Status, ae.Code
		}
		writeError(w, status, code, err.Error())
		return
	}
	parts := strings.Split(strings.Trim(signed.URL.Path, "/"), "/")
	// parts[0] is the account Authenticate matched.
	switch {
	case len(parts) == 2 && parts[1] == "activity":
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n <= 0 || n > 1000 {
			n = 100
		}
		var list []activityEntry
		if x.cfg.Activity != nil {
			for _, e := range x.cfg.Activity.Last(account, n) {
				list = append(list, entryOf(e))
			}
		}
		if list == nil {
			list = []activityEntry{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"requests": list})
	case len(parts) == 4 && parts[1] == "queues" && parts[3] == "messages" && x.cfg.Inspector != nil:
		ms, err := x.cfg.Inspector.QueueMessages(r.Context(), account, parts[2], 1000)
		if err != nil {
			x.fail(w, err)
			return
		}
		if ms == nil {
			ms = []QueueMessage{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"messages": ms})
	case len(parts) == 4 && parts[1] == "shares" && parts[3] == "handles" && x.cfg.Inspector != nil:
		hs, err := x.cfg.Inspector.FileHandles(r.Context(), account, parts[2])
		if err != nil {
			x.fail(w, err)
			return
		}
		if hs == nil {
			hs = []FileHandle{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"handles": hs})
	case len(parts) == 4 && parts[1] == "containers" && parts[3] == "lease" && x.cfg.Inspector != nil:
		var l BlobLease
		var ok bool
		var err error
		if name := r.URL.Query().Get("blob"); name != "" {
			l, ok, err = x.cfg.Inspector.BlobLease(r.Context(), account, parts[2], name)
		} else {
			l, ok, err = x.cfg.Inspector.ContainerLease(r.Context(), account, parts[2])
		}
		if err != nil {
			x.fail(w, err)
			return
		}
		if !ok {
			writeError(w, http.StatusNotFound, "ResourceNotFound", "no such container or blob")
			return
		}
		writeJSON(w, http.StatusOK, l)
	case len(parts) == 2 && parts[1] == "rates" && x.cfg.Counts != nil:
		// Counters of every account: the server's metrics are not kept
		// per account.
		writeJSON(w, http.StatusOK, map[string]any{"time": time.Now().UTC(), "counts": x.cfg.Counts()})
	case len(parts) == 2 && parts[1] == "changes" && x.cfg.Inspector != nil:
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n <= 0 || n > 1000 {
			n = 100
		}
		cs, on, err := x.cfg.Inspector.Changes(r.Context(), account, n)
		if err != nil {
			x.fail(w, err)
			return
		}
		if cs == nil {
			cs = []Change{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"on": on, "changes": cs})
	default:
		writeError(w, http.StatusNotFound, "ResourceNotFound", "no such console endpoint")
	}
}

// fail renders a domain error: its Azure status and code, or 500.
func (x *inspect) fail(w http.ResponseWriter, err error) {
	var ae *azerr.Error
	if errors.As(err, &ae) {
		writeError(w, ae.Status, ae.Code, ae.Error())
		return
	}
	x.cfg.Logger.Error("console inspection", "err", err)
	writeError(w, http.StatusInternalServerError, "InternalError", "the server failed to read the store")
}

// activityEntry is one request of the activity list.
type activityEntry struct {
	Time       time.Time `json:"time"`
	Service    string    `json:"service"`
	Method     string    `json:"method"`
	URL        string    `json:"url"`
	Operation  string    `json:"operation"`
	Status     int       `json:"status"`
	ErrorCode  string    `json:"errorCode,omitempty"`
	RequestID  string    `json:"requestId"`
	Client     string    `json:"client"`
	DurationMS float64   `json:"durationMs"`
}
