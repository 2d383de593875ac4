// The console's configuration (Config, and the Inspector it reads the
// stores through, with what that returns), and the JSON and error answers
// every endpoint writes.

package console

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// Config is what the console serves.
type Config struct {
	// Services maps a service name (blob, queue, table, file, dfs) to
	// its listener's base URL, e.g. http://127.0.0.1:10000.
	Services map[string]string
	// Accounts verifies the signatures of the console's own endpoints.
	Accounts auth.Lookup
	// AccountNames are the accounts served, offered in the sign-in form.
	AccountNames []string
	// DevKey, when set, is the key the page is prefilled with for a
	// browser on loopback (the dev account's well-known key, which is
	// public; only when that account is served).
	DevAccount, DevKey string
	// Clock is the server's clock (signatures' date skew uses its wall
	// time, as the service ports do).
	Clock clock.Clock
	// Activity holds the last requests the service listeners answered.
	Activity *Activity
	// ClockControl is clock control's endpoint (nil when it is off).
	ClockControl http.Handler
	// Counts returns the requests answered so far by "service
	// operation" (metrics.Metrics.RequestCounts), from which the Activity
	// view draws request rates; nil: none.
	Counts func() map[string]float64
	// Events is the event subscriptions' admin endpoint (GET /events,
	// internal/events/webhook.Handler), served under the reserved prefix
	// as on the service ports; nil: none.
	Events http.Handler
	// Inspector reads what the REST API does not show (nil: those
	// endpoints answer 404).
	Inspector Inspector
	Logger    *slog.Logger
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]string{"code": code, "error": msg})
}

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

// ByteRange is one byte-range lock a handle holds.
type ByteRange struct {
	Offset    uint64 `json:"offset"`
	Length    uint64 `json:"length"`
	Exclusive bool   `json:"exclusive"`
}
