package server

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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
