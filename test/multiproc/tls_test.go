package multiproc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// clusterTLS is the certificate every process of a bearer cluster serves
// (--tls-cert, --tls-key): clients send bearer tokens over HTTPS only, so
// --oauth basic needs it.
type clusterTLS struct {
	certFile, keyFile string
	roots             *x509.CertPool
}

// newClusterTLS writes a self-signed certificate for 127.0.0.1 and its
// key as PEM files into dir.
func newClusterTLS(t *testing.T, dir string) *clusterTLS {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "cerulean multiproc test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := &clusterTLS{certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem"), roots: x509.NewCertPool()}
	c.roots.AddCert(leaf)
	if err := os.WriteFile(c.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// scheme is the scheme of the cluster's HTTP services (not the metrics
// port, which stays plain HTTP).
func (c *cluster) scheme() string {
	if c.tls != nil {
		return "https"
	}
	return "http"
}

// tlsClient is the client side of the cluster's TLS (nil: plain HTTP).
func (c *cluster) tlsClient() *tls.Config {
	if c.tls == nil {
		return nil
	}
	return &tls.Config{RootCAs: c.tls.roots, MinVersion: tls.VersionTLS12}
}
