package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestToAzure: which Azure error and which log line each kind of failure
// gives.
func TestToAzure(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name    string
		ctx     context.Context
		err     error
		code    string
		status  int
		logLine string // "" when nothing is logged
	}{
		{"azure error", live, azerr.New(azerr.BlobNotFound), azerr.BlobNotFound, 404, ""},
		{"deadline", live, fmt.Errorf("x: %w", context.DeadlineExceeded), azerr.OperationTimedOut, 500, ""},
		{"client canceled", gone, fmt.Errorf("read: %w", context.Canceled), azerr.OperationTimedOut, 500, "level=INFO msg=\"request canceled\""},
		// A cancellation that is not the request's own is a fault.
		{"foreign cancel", live, context.Canceled, azerr.InternalError, 500, "level=ERROR msg=\"internal error\""},
		{"store down", live, fmt.Errorf("%w: dial", kv.ErrUnavailable), azerr.ServerBusy, 503, "level=ERROR msg=\"store unavailable\""},
		{"bug", live, errors.New("boom"), azerr.InternalError, 500, "level=ERROR msg=\"internal error\""},
		// The in-memory store at its limit answers as Azurite does.
		{"memory full", live, fmt.Errorf("reading request body: %w", &chunk.FullError{Limit: 4096}), azerr.MemoryExtentStoreAtSizeLimit, 409, "level=WARN msg=\"in-memory store full\" limit=4096"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			e := ToAzure(c.ctx, log, c.err)
			if e.Code != c.code || e.Status != c.status {
				t.Fatalf("got %d %s, want %d %s", e.Status, e.Code, c.status, c.code)
			}
			if c.logLine == "" && buf.Len() != 0 || c.logLine != "" && !strings.Contains(buf.String(), c.logLine) {
				t.Fatalf("log %q, want %q", buf.String(), c.logLine)
			}
		})
	}
}
