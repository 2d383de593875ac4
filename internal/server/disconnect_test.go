package server

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// TestClientDisconnectMidResponse: a client that drops the connection
// while a download is being written is logged as a disconnect (info), not
// as an internal error, and the request line shows no InternalError on
// the 200 that was already sent.
func TestClientDisconnectMidResponse(t *testing.T) {
	var buf syncBuffer
	s := New(Config{
		Clock:    clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)),
		Accounts: testAccounts,
		Logger:   slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	done := make(chan error, 1)
	h := s.Wrap(Service{Name: "blob", Kind: auth.Blob, Handler: handlerFunc(func(w http.ResponseWriter, r *Request) error {
		r.Op = "getBlob"
		w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		w.WriteHeader(http.StatusOK)
		chunk := make([]byte, 64<<10)
		for i := 0; i < 1<<14; i++ { // as io.Copy does: stop at the first write error
			if _, err := w.Write(chunk); err != nil {
				done <- err
				return err
			}
		}
		done <- nil
		return nil
	})})
	srv := httptest.NewServer(h)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET /devstoreaccount1/c/b HTTP/1.1\r\nHost: x\r\nx-ms-version: 2025-01-05\r\n\r\n")
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("status line %q %v", line, err)
	}
	if _, err := br.Read(make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	conn.Close() // mid-response
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the whole 1 GiB was written to a closed connection")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler never saw the disconnect")
	}
	srv.Close() // waits for the handler's return and the request line
	out := buf.String()
	if strings.Contains(out, "internal error") || strings.Contains(out, "InternalError") {
		t.Fatalf("a disconnect logged as an internal error:\n%s", out)
	}
	if !strings.Contains(out, "client disconnected") || !strings.Contains(out, "operation=getBlob") {
		t.Fatalf("no disconnect logged:\n%s", out)
	}
}

// TestStoreConnectionErrorIsAnswered: a handler that fails, before it
// has answered, with a broken pipe or reset that is not the client's
// (PostgreSQL's connection dropping as the database stops) gets its
// error answer; it was taken for a client disconnect and left
// unanswered, so net/http sent an empty 200 that the SDK reported as a
// failed Put Blob with status 200 (TestDatabaseRestart).
func TestStoreConnectionErrorIsAnswered(t *testing.T) {
	for _, cause := range []error{
		&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)},
		fmt.Errorf("postgres: commit: %w", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}),
	} {
		s := New(Config{
			Clock:    clock.NewFake(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)),
			Accounts: testAccounts,
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		h := s.Wrap(Service{Name: "blob", Kind: auth.Blob, Handler: handlerFunc(func(w http.ResponseWriter, r *Request) error {
			return cause
		})})
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPut, "/devstoreaccount1/c/b", strings.NewReader("data"))
		req.Header.Set("x-ms-version", "2025-01-05")
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusInternalServerError || rec.Header().Get("x-ms-error-code") != "InternalError" {
			t.Errorf("%v: answered %d %q, want 500 InternalError", cause, rec.Code, rec.Header().Get("x-ms-error-code"))
		}
	}
}
