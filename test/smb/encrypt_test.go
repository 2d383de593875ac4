package smb

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ntlmssp "github.com/Azure/go-ntlmssp"
	gosmb2 "github.com/hirochachacha/go-smb2"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/smb"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// smbclientWith runs smbclient like e.smbclient with extra options
// (protection, protocol, smb.conf options) before -c.
func (e *env) smbclientWith(shareName, dir, cmds string, opts ...string) (string, error) {
	e.t.Helper()
	bin := need(e.t, "smbclient")
	authFile := filepath.Join(e.t.TempDir(), "auth")
	if err := os.WriteFile(authFile, []byte("username = "+app.DevAccount+"\npassword = "+app.DevKey+"\ndomain = AZURE\n"), 0o600); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	args := append([]string{"//127.0.0.1/" + shareName, "-p", e.port, "-A", authFile}, opts...)
	cmd := exec.CommandContext(ctx, bin, append(args, "-c", cmds)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+e.t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// roundTrip puts a file with smbclient, gets it back, and checks both
// copies (and the REST view).
func (e *env) roundTrip(t *testing.T, shareName string, opts ...string) {
	t.Helper()
	sc := e.svc.NewShareClient(shareName)
	dir := t.TempDir()
	local := randomBytes(1<<20 + 777)
	if err := os.WriteFile(filepath.Join(dir, "local.bin"), local, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := e.smbclientWith(shareName, dir, "put local.bin up.bin; get up.bin back.bin; ls", opts...)
	if err != nil {
		t.Fatalf("smbclient %v: %v\n%s", opts, err, out)
	}
	back, err := os.ReadFile(filepath.Join(dir, "back.bin"))
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "file read back over SMB", back, local)
	rest, err := e.download(sc, "up.bin")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "SMB file read over REST", rest, local)
}

// TestSmbclientEncryption: with encryption required, smbclient
// --client-protection=encrypt writes and reads a file on SMB 3.1.1 with
// each cipher it can be told to offer (AES-128-GCM, AES-128-CCM,
// AES-256-GCM, AES-256-CCM), and on 3.0 and 3.0.2 (AES-128-CCM);
// smbclient without options encrypts too (the server sets ENCRYPT_DATA),
// and a 2.1 client is refused.
func TestSmbclientEncryption(t *testing.T) {
	logs := &syncBuffer{}
	e := startWith(t, func(c *app.Config) {
		c.SMBEncrypt = smb.EncryptRequired
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	e.share("sealed")
	for _, tc := range []struct {
		name   string
		opts   []string
		cipher string // the server's log of the session's cipher
	}{
		{"SMB3_11 default", []string{"-m", "SMB3_11"}, "dialect=3.1.1 cipher=AES-128-GCM"},
		{"SMB3_11 encrypt", []string{"-m", "SMB3_11", "--client-protection=encrypt"}, "dialect=3.1.1 cipher=AES-128-GCM"},
		{"SMB3_11 aes-128-gcm", []string{"-m", "SMB3_11", "--client-protection=encrypt", "--option=client smb3 encryption algorithms=aes-128-gcm"}, "dialect=3.1.1 cipher=AES-128-GCM"},
		{"SMB3_11 aes-128-ccm", []string{"-m", "SMB3_11", "--client-protection=encrypt", "--option=client smb3 encryption algorithms=aes-128-ccm"}, "dialect=3.1.1 cipher=AES-128-CCM"},
		{"SMB3_11 aes-256-gcm", []string{"-m", "SMB3_11", "--client-protection=encrypt", "--option=client smb3 encryption algorithms=aes-256-gcm"}, "dialect=3.1.1 cipher=AES-256-GCM"},
		{"SMB3_11 aes-256-ccm", []string{"-m", "SMB3_11", "--client-protection=encrypt", "--option=client smb3 encryption algorithms=aes-256-ccm"}, "dialect=3.1.1 cipher=AES-256-CCM"},
		{"SMB3_02", []string{"-m", "SMB3_02", "--client-protection=encrypt"}, "dialect=3.0.2 cipher=AES-128-CCM"},
		{"SMB3_00", []string{"-m", "SMB3_00", "--client-protection=encrypt"}, "dialect=3.0 cipher=AES-128-CCM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := *e
			e.t = t
			logs.reset()
			e.roundTrip(t, "sealed", tc.opts...)
			if got := logs.String(); !strings.Contains(got, "SMB session encrypts") || !strings.Contains(got, tc.cipher) {
				t.Fatalf("server log lacks %q:\n%s", tc.cipher, got)
			}
		})
	}
	out, err := e.smbclientWith("sealed", t.TempDir(), "ls", "-m", "SMB2_10")
	if err == nil || !strings.Contains(out, "NT_STATUS_ACCESS_DENIED") {
		t.Fatalf("SMB 2.1 client with encryption required: %v\n%s", err, out)
	}
}

// TestSmbclientEncryptionOff: a client that demands encryption cannot use
// a server that does not offer it.
func TestSmbclientEncryptionOff(t *testing.T) {
	e := start(t)
	e.share("plain")
	out, err := e.smbclientWith("plain", t.TempDir(), "ls", "-m", "SMB3_11", "--client-protection=encrypt")
	if err == nil {
		t.Fatalf("smbclient --client-protection=encrypt succeeded without encryption:\n%s", out)
	}
}

// TestRequireSigning: with signing required, a client that does not sign
// (a raw SMB 2.1 client that logs on with signing enabled but not
// required, then sends unsigned requests) is refused with
// STATUS_ACCESS_DENIED, while a server without the option serves it;
// anonymous smbclient is refused (NT_STATUS_LOGON_FAILURE, as always).
// smbclient itself cannot be made not to sign (SMB2 signing cannot be
// switched off in Samba's client: --client-protection=off still signs
// when the server requires it), so it is checked to work in 3.1.1, 3.0
// and 2.1.
func TestRequireSigning(t *testing.T) {
	e := startWith(t, func(c *app.Config) { c.SMBRequireSigning = true })
	e.share("signed")
	c := e.unsignedClient()
	if h, _ := c.call(smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\127.0.0.1\signed`}.Encode()); h.Status != smb2.StatusAccessDenied {
		t.Fatalf("unsigned TREE_CONNECT: %v, want STATUS_ACCESS_DENIED", h.Status)
	}
	for _, opts := range [][]string{
		{"-m", "SMB3_11", "--client-protection=sign"},
		{"-m", "SMB3_11"},
		{"-m", "SMB3_11", "--client-protection=off"},
		{"-m", "SMB3_00", "--client-protection=off"},
		{"-m", "SMB2_10", "--client-protection=off"},
	} {
		t.Run(strings.Join(opts, " "), func(t *testing.T) {
			e := *e
			e.t = t
			e.roundTrip(t, "signed", opts...)
		})
	}

	// Anonymous (and guest) logons are refused, here as always.
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	anon := exec.CommandContext(ctx, need(t, "smbclient"), "//127.0.0.1/signed", "-p", e.port, "-N", "-U", "%", "-m", "SMB3_11", "-c", "ls")
	anon.Env = append(os.Environ(), "HOME="+t.TempDir())
	if out, err := anon.CombinedOutput(); err == nil || !strings.Contains(string(out), "NT_STATUS_LOGON_FAILURE") {
		t.Fatalf("anonymous smbclient: %v\n%s", err, out)
	}

	plain := start(t)
	plain.share("signed")
	c = plain.unsignedClient()
	if h, _ := c.call(smb2.CommandTreeConnect, smb2.TreeConnectRequest{Path: `\\127.0.0.1\signed`}.Encode()); h.Status != smb2.StatusSuccess {
		t.Fatalf("unsigned TREE_CONNECT without required signing: %v", h.Status)
	}
}

// unsignedClient negotiates SMB 2.1 with signing enabled (not required)
// and logs on; its requests are not signed.
func (e *env) unsignedClient() *lockClient {
	e.t.Helper()
	nc, err := net.Dial("tcp", e.app.SMBAddr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { nc.Close() })
	c := &lockClient{t: e.t, nc: nc}
	neg := smb2.NegotiateRequest{SecurityMode: smb2.SigningEnabled, Dialects: []smb2.Dialect{smb2.Dialect210}}
	h, msg := c.call(smb2.CommandNegotiate, neg.Encode())
	if h.Status != smb2.StatusSuccess {
		e.t.Fatalf("negotiate: %v", h.Status)
	}
	nr, err := smb2.DecodeNegotiateResponse(msg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Logf("server SecurityMode %#x", nr.SecurityMode)
	tok, err := ntlmssp.NewNegotiateMessage("", "")
	if err != nil {
		e.t.Fatal(err)
	}
	h, msg = c.call(smb2.CommandSessionSetup, smb2.SessionSetupRequest{SecurityMode: 1, SecurityBuffer: tok}.Encode())
	if h.Status != smb2.StatusMoreProcessingRequired {
		e.t.Fatalf("session setup: %v", h.Status)
	}
	c.sid = h.SessionID
	ss, err := smb2.DecodeSessionSetupResponse(msg)
	if err != nil {
		e.t.Fatal(err)
	}
	if tok, err = ntlmssp.NewAuthenticateMessage(ss.SecurityBuffer, app.DevAccount, app.DevKey, nil); err != nil {
		e.t.Fatal(err)
	}
	if h, _ = c.call(smb2.CommandSessionSetup, smb2.SessionSetupRequest{SecurityMode: 1, SecurityBuffer: tok}.Encode()); h.Status != smb2.StatusSuccess {
		e.t.Fatalf("session setup: %v", h.Status)
	}
	return c
}

// TestGoSMB2Encryption: the go-smb2 client, an independent
// implementation, reads and writes through an encrypted session on 3.1.1
// (it offers AES-128-GCM and AES-128-CCM) and 3.0 (AES-128-CCM).
func TestGoSMB2Encryption(t *testing.T) {
	e := startWith(t, func(c *app.Config) { c.SMBEncrypt = smb.EncryptRequired })
	sc := e.share("gosmb2")
	for _, d := range []uint16{0x0311, 0x0300} {
		nc, err := net.Dial("tcp", e.app.SMBAddr)
		if err != nil {
			t.Fatal(err)
		}
		dl := &gosmb2.Dialer{
			Negotiator: gosmb2.Negotiator{SpecifiedDialect: d},
			Initiator:  &gosmb2.NTLMInitiator{User: app.DevAccount, Password: app.DevKey},
		}
		s, err := dl.DialContext(e.ctx, nc)
		if err != nil {
			t.Fatalf("dialect %#x: %v", d, err)
		}
		fs, err := s.Mount("gosmb2")
		if err != nil {
			t.Fatalf("dialect %#x: mount: %v", d, err)
		}
		data := randomBytes(300000)
		name := "f" + string(rune('0'+d&0xf)) + ".bin"
		f, err := fs.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		mustEqual(t, "go-smb2 read back", got, data)
		rest, err := e.download(sc, name)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "REST read", rest, data)
		_ = fs.Umount()
		_ = s.Logoff()
		nc.Close()
	}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
