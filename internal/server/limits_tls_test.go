package server

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// TestConnectionCapServerBusyOverTLS: on an HTTPS listener the refusal
// past the cap is answered over TLS (a 503 ServerBusy the client can
// read), not as plain text into the handshake; and the held connection
// still reports HTTPS (the cap sits under TLS, so overTLS still finds
// the *tls.Conn).
func TestConnectionCapServerBusyOverTLS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}
	s := New(Config{Clock: clock.Real{}, Accounts: testAccounts, TLS: cfg, Limits: Limits{MaxConns: 1}})
	https := make(chan bool, 4)
	addr, err := s.Listen(Service{Name: "blob", Kind: auth.Blob, Addr: "127.0.0.1:0", Handler: handlerFunc(func(w http.ResponseWriter, r *Request) error {
		https <- r.HTTPS
		w.WriteHeader(http.StatusOK)
		return nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	dial := func() (*tls.Conn, *bufio.Reader) {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	get := func(c *tls.Conn, br *bufio.Reader) *http.Response {
		if _, err := io.WriteString(c, "GET /devstoreaccount1/c HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	held, hbr := dial()
	if r := get(held, hbr); r.StatusCode != 200 || !<-https {
		t.Fatalf("held HTTPS connection: %d", r.StatusCode)
	}
	c, br := dial()
	r := get(c, br)
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 503 || r.Header.Get("x-ms-error-code") != "ServerBusy" || !strings.Contains(string(body), "<Code>ServerBusy</Code>") {
		t.Fatalf("over the cap over TLS: %d %s %s", r.StatusCode, r.Header.Get("x-ms-error-code"), body)
	}
}
