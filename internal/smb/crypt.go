package smb

// SMB hardening for servers reachable beyond loopback: required signing
// and SMB 3 encryption (MS-SMB2 3.3.5.2.1.1, 3.3.5.2.4, 3.3.5.4,
// 3.3.5.5.3, 3.3.5.7). The wire format (transform header, AES-CCM and
// AES-GCM, key derivation) is package smb2's transform.go; this file
// holds the server's policy and the connection's and sessions' state,
// which conn.go, session.go and tree.go call at a few marked points.

import (
	"crypto/rand"
	"slices"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// serverCiphers are the 3.1.1 ciphers in the server's order of
// preference: the first one the client also offers is chosen, as smbd
// does. 3.0 and 3.0.2 have only AES-128-CCM.
var serverCiphers = []uint16{smb2.CipherAES128GCM, smb2.CipherAES128CCM, smb2.CipherAES256GCM, smb2.CipherAES256CCM}

// securityMode is the SecurityMode of the NEGOTIATE response.
func (srv *Server) securityMode() smb2.SecurityMode {
	if srv.cfg.RequireSigning {
		return smb2.SigningEnabled | smb2.SigningRequired
	}
	return smb2.SigningEnabled
}

// offerEncryption adds encryption to the NEGOTIATE response of dialect d
// when the server encrypts and the client can (MS-SMB2 3.3.5.4): for
// 3.0 and 3.0.2 the ENCRYPTION capability (AES-128-CCM), for 3.1.1 an
// ENCRYPTION context with the chosen cipher, or cipher 0 when the client
// offers none the server has.
func (c *conn) offerEncryption(d smb2.Dialect, req smb2.NegotiateRequest, resp *smb2.NegotiateResponse) {
	if c.srv.cfg.Encrypt == EncryptOff {
		return
	}
	switch d {
	case smb2.Dialect300, smb2.Dialect302:
		if req.Capabilities&smb2.CapEncryption != 0 {
			resp.Capabilities |= smb2.CapEncryption
			c.crypt.cipher = smb2.CipherAES128CCM
		}
	case smb2.Dialect311:
		if req.Encryption == nil {
			return
		}
		chosen := uint16(0)
		for _, id := range serverCiphers {
			if slices.Contains(req.Encryption.Ciphers, id) {
				chosen = id
				break
			}
		}
		c.crypt.cipher = chosen
		resp.Contexts = append(resp.Contexts, smb2.EncryptionCapabilities{Ciphers: []uint16{chosen}}.Context())
	}
}

// checkCanEncrypt refuses a SESSION_SETUP when encryption is required
// and the connection cannot encrypt: a dialect below 3.0, or no cipher
// in common (MS-SMB2 3.3.5.5: EncryptData and RejectUnencryptedAccess).
func (c *conn) checkCanEncrypt() error {
	if c.srv.cfg.Encrypt == EncryptRequired && c.crypt.cipher == 0 {
		c.log.Info("SMB logon refused: encryption is required and the client cannot encrypt", "dialect", c.dialect)
		return smb2.StatusAccessDenied
	}
	return nil
}

// startEncryption derives the encryption keys of a session that has just
// authenticated with sessionKey, when the connection has a cipher, and
// marks it encrypting (SMB2_SESSION_FLAG_ENCRYPT_DATA, MS-SMB2
// 3.3.5.5.3). The final SESSION_SETUP response itself goes signed.
func (c *conn) startEncryption(s *session, sessionKey []byte, resp *smb2.SessionSetupResponse) error {
	if c.crypt.cipher == 0 {
		return nil
	}
	keys, err := smb2.DeriveCipherKeys(c.dialect, c.crypt.cipher, sessionKey, s.preauth)
	if err != nil {
		return err
	}
	if s.crypt.out, err = smb2.NewCipher(c.crypt.cipher, keys.ServerOut); err != nil {
		return err
	}
	if s.crypt.in, err = smb2.NewCipher(c.crypt.cipher, keys.ServerIn); err != nil {
		return err
	}
	_, _ = rand.Read(s.crypt.nonceSalt[:])
	s.crypt.encrypt = c.srv.cfg.Encrypt != EncryptOff
	if s.crypt.encrypt {
		resp.SessionFlags |= smb2.SessionFlagEncryptData
		c.log.Debug("SMB session encrypts", "session", s.vfsID, "dialect", c.dialect, "cipher", smb2.CipherName(c.crypt.cipher))
	}
	return nil
}

// shareFlags are the SMB2_SHAREFLAG_ENCRYPT_DATA of a TREE_CONNECT
// response on session s (MS-SMB2 3.3.5.7).
func shareFlags(s *session) uint32 {
	if s.crypt.encrypt {
		return smb2.ShareFlagEncryptData
	}
	return 0
}

// checkProtection checks that a request of session r.sess came as the
// session demands: encrypted (by that session's key) when the session
// encrypts, else signed when it requires signing, with a valid signature
// when signed. It refuses with STATUS_ACCESS_DENIED (MS-SMB2 3.3.5.2.4,
// 3.3.5.2.9). With RequireSigning, an unsigned TREE_CONNECT on 3.1.1
// ends the connection, as MS-SMB2 3.3.5.7 prescribes (without it such
// requests keep being answered, as before).
func (c *conn) checkProtection(r *request) error {
	if sealed := r.chain.sealed; sealed != nil {
		if r.sess != sealed {
			c.log.Info("encrypted SMB request for another session", "command", r.hdr.Command, "session", r.sess.id)
			return smb2.StatusAccessDenied
		}
		return nil
	}
	if r.sess.crypt.encrypt {
		c.log.Info("unencrypted SMB request on an encrypted session", "command", r.hdr.Command, "session", r.sess.id)
		return smb2.StatusAccessDenied
	}
	if c.srv.cfg.RequireSigning && c.dialect == smb2.Dialect311 && r.hdr.Command == smb2.CommandTreeConnect && r.hdr.Flags&smb2.FlagSigned == 0 && r.sess.valid {
		return drop("unsigned TREE_CONNECT on 3.1.1 (MS-SMB2 3.3.5.7)")
	}
	return c.checkSignature(r)
}

// sealFor is the session whose key encrypts a reply to r: the one that
// encrypted the request.
func sealFor(r *request) *session { return r.chain.sealed }

// sealAsync is the session whose key encrypts the final reply of an
// asynchronous operation of s: an encrypting session only takes
// encrypted requests.
func sealAsync(s *session) *session {
	if s != nil && s.crypt.encrypt && s.crypt.out != nil {
		return s
	}
	return nil
}

// sealPayload encrypts a frame's payload for session s (nil: returned as is).
func sealPayload(s *session, payload []byte) []byte {
	if s == nil {
		return payload
	}
	return smb2.Encrypt(s.crypt.out, s.crypt.nonce(), s.id, payload)
}

// checkSignature verifies a signed request of an authenticated session
// and refuses an unsigned one when the session requires signing (MS-SMB2
// 3.3.5.2.4). A session still authenticating has no key: its requests are
// taken as they come.
func (c *conn) checkSignature(r *request) error {
	s := r.sess
	if s.signKey == nil {
		return nil
	}
	if r.hdr.Flags&smb2.FlagSigned != 0 {
		if !smb2.Verify(r.msg, s.signKey, c.signAlg) {
			c.log.Info("SMB request with a bad signature", "command", r.hdr.Command, "session", s.id)
			return smb2.StatusAccessDenied
		}
		r.signed = true
		return nil
	}
	if s.signRequired && r.hdr.Command != smb2.CommandEcho {
		return smb2.StatusAccessDenied
	}
	return nil
}
