package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// smbCheck sends an SMB2 NEGOTIATE (2.1, 3.0.2) to addr and wants a
// successful NEGOTIATE response: a listener whose accept loop has
// stopped still completes TCP handshakes from its backlog but never
// answers, which only a protocol exchange notices.
func smbCheck(ctx context.Context, addr string) error {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	req := smb2.NegotiateRequest{SecurityMode: smb2.SigningEnabled, Dialects: []smb2.Dialect{smb2.Dialect210, smb2.Dialect302}}
	msg := smb2.Marshal(smb2.Header{Command: smb2.CommandNegotiate, CreditCharge: 1, Credits: 1}, req.Encode())
	if err := smb2.WriteFrame(nc, msg); err != nil {
		return err
	}
	payload, err := smb2.ReadFrame(nc, 64<<10)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return errors.New("no answer to NEGOTIATE")
		}
		return err
	}
	h, err := smb2.ParseHeader(payload)
	if err != nil {
		return err
	}
	if !h.IsResponse() || h.Command != smb2.CommandNegotiate || h.Status != smb2.StatusSuccess {
		return fmt.Errorf("NEGOTIATE answered %v %v", h.Command, h.Status)
	}
	return nil
}

// readyzCheck GETs url (a metrics port's /readyz) and wants 200; a 503
// carries the reason (store unreachable, SMB listener dead, shutting
// down).
func readyzCheck(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return nil
}
