package chunk_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
)

func TestRunPeriodically(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logBuf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	calls := make(chan int, 10)
	n := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		chunk.RunPeriodically(ctx, time.Millisecond, func(context.Context) error {
			n++
			calls <- n
			if n == 1 {
				return errors.New("first run fails")
			}
			return nil
		}, logger)
	}()
	for i := 1; i <= 3; i++ {
		if got := <-calls; got != i {
			t.Fatalf("call %d reported as %d", i, got)
		}
	}
	cancel()
	<-done
	if !strings.Contains(logBuf.String(), "first run fails") {
		t.Fatalf("error not logged: %q", logBuf.String())
	}
}
