package ntlm

import (
	"bytes"
	"fmt"
)

// DER contents of the object identifiers SPNEGO needs.
var (
	oidSPNEGO  = []byte{0x2b, 0x06, 0x01, 0x05, 0x05, 0x02}                         // 1.3.6.1.5.5.2
	oidNTLMSSP = []byte{0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a} // 1.3.6.1.4.1.311.2.2.10
)

// negState values of a negTokenResp (RFC 4178 §4.2.2).
const (
	negStateAbsent           = -1
	negStateAcceptCompleted  = 0
	negStateAcceptIncomplete = 1
	negStateReject           = 2
	negStateRequestMIC       = 3
)

// hintName is the negHints.hintName Windows and Samba put in the server's
// negTokenInit; clients ignore it (MS-SPNG 2.2.1).
const hintName = "not_defined_in_RFC4178@please_ignore"

// negotiateHint is the 74-byte GSS-API SPNEGO negTokenInit2 that goes in the
// SMB2 NEGOTIATE response: mechTypes = [NTLMSSP] and the negHints above,
// byte-for-byte what smbd 4.17 sends (captured; the NegTokenInit2 form and
// the hint name are MS-SPNG 2.2.1's).
var negotiateHint = tlv(0x60,
	tlv(0x06, oidSPNEGO),
	tlv(0xa0, tlv(0x30,
		tlv(0xa0, tlv(0x30, tlv(0x06, oidNTLMSSP))),
		tlv(0xa3, tlv(0x30, tlv(0xa0, tlv(0x1b, []byte(hintName))))),
	)),
)

// negTokenInit is the part of a client's NegTokenInit the server uses.
type negTokenInit struct {
	mechTypes    [][]byte // OID contents, in the client's order of preference
	mechTypesDER []byte   // the MechTypeList element exactly as sent; the mechListMIC covers it
	mechToken    []byte   // optimistic token for mechTypes[0]; nil if absent
}

// negTokenResp is a NegTokenResp (RFC 4178 §4.2.2).
type negTokenResp struct {
	negState      int    // negStateAbsent if the field is missing
	supportedMech []byte // OID contents; nil if absent
	responseToken []byte // nil if absent
	mechListMIC   []byte // nil if absent
}

// parseSPNEGO decodes a client SPNEGO token. Exactly one of init and resp is
// non-nil on success. It accepts a GSS-API initial context token
// ([APPLICATION 0] with the SPNEGO OID) wrapping a negTokenInit, a bare
// negTokenInit ([0]) and a negTokenResp ([1]). Unknown fields are skipped and
// bytes after the token are ignored.
func parseSPNEGO(b []byte) (init *negTokenInit, resp *negTokenResp, err error) {
	tag, val, _, _, err := readTLV(b)
	if err != nil {
		return nil, nil, err
	}
	switch tag {
	case 0x60:
		oid, inner, err := expectTLV(val, 0x06)
		if err != nil {
			return nil, nil, err
		}
		if !bytes.Equal(oid, oidSPNEGO) {
			return nil, nil, fmt.Errorf("GSS token for mechanism %x, not SPNEGO", oid)
		}
		body, _, err := expectTLV(inner, 0xa0)
		if err != nil {
			return nil, nil, err
		}
		init, err := parseNegTokenInit(body)
		return init, nil, err
	case 0xa0:
		init, err := parseNegTokenInit(val)
		return init, nil, err
	case 0xa1:
		resp, err := parseNegTokenResp(val)
		return nil, resp, err
	}
	return nil, nil, fmt.Errorf("unexpected SPNEGO tag %#x", tag)
}

// parseNegTokenInit decodes the contents of the [0] choice:
// SEQUENCE { mechTypes [0], reqFlags [1], mechToken [2], mechListMIC [3] }.
func parseNegTokenInit(b []byte) (*negTokenInit, error) {
	seq, _, err := expectTLV(b, 0x30)
	if err != nil {
		return nil, err
	}
	t := &negTokenInit{}
	haveMechTypes := false
	for len(seq) > 0 {
		tag, val, _, rest, err := readTLV(seq)
		if err != nil {
			return nil, err
		}
		seq = rest
		switch tag {
		case 0xa0:
			_, list, whole, _, err := readTLV(val)
			if err != nil {
				return nil, err
			}
			if whole[0] != 0x30 {
				return nil, errDER
			}
			t.mechTypesDER = whole
			t.mechTypes = t.mechTypes[:0]
			for len(list) > 0 {
				oid, r, err := expectTLV(list, 0x06)
				if err != nil {
					return nil, err
				}
				t.mechTypes = append(t.mechTypes, oid)
				list = r
			}
			haveMechTypes = true
		case 0xa2:
			tok, _, err := expectTLV(val, 0x04)
			if err != nil {
				return nil, err
			}
			t.mechToken = tok
		}
		// reqFlags [1], mechListMIC [3] and anything newer are not used.
	}
	if !haveMechTypes {
		return nil, fmt.Errorf("negTokenInit without mechTypes")
	}
	return t, nil
}

// parseNegTokenResp decodes the contents of the [1] choice.
func parseNegTokenResp(b []byte) (*negTokenResp, error) {
	seq, _, err := expectTLV(b, 0x30)
	if err != nil {
		return nil, err
	}
	t := &negTokenResp{negState: negStateAbsent}
	for len(seq) > 0 {
		tag, val, _, rest, err := readTLV(seq)
		if err != nil {
			return nil, err
		}
		seq = rest
		switch tag {
		case 0xa0:
			e, _, err := expectTLV(val, 0x0a)
			if err != nil {
				return nil, err
			}
			if len(e) != 1 || e[0] > negStateRequestMIC {
				return nil, fmt.Errorf("bad negState %x", e)
			}
			t.negState = int(e[0])
		case 0xa1:
			oid, _, err := expectTLV(val, 0x06)
			if err != nil {
				return nil, err
			}
			t.supportedMech = oid
		case 0xa2:
			tok, _, err := expectTLV(val, 0x04)
			if err != nil {
				return nil, err
			}
			t.responseToken = tok
		case 0xa3:
			mic, _, err := expectTLV(val, 0x04)
			if err != nil {
				return nil, err
			}
			t.mechListMIC = mic
		}
	}
	return t, nil
}

// marshal encodes t as a complete negTokenResp ([1] choice).
func (t *negTokenResp) marshal() []byte {
	var fields [][]byte
	if t.negState != negStateAbsent {
		fields = append(fields, tlv(0xa0, tlv(0x0a, []byte{byte(t.negState)})))
	}
	if t.supportedMech != nil {
		fields = append(fields, tlv(0xa1, tlv(0x06, t.supportedMech)))
	}
	if t.responseToken != nil {
		fields = append(fields, tlv(0xa2, tlv(0x04, t.responseToken)))
	}
	if t.mechListMIC != nil {
		fields = append(fields, tlv(0xa3, tlv(0x04, t.mechListMIC)))
	}
	return tlv(0xa1, tlv(0x30, fields...))
}

// rejectToken is the negTokenResp{negState: reject} sent when SPNEGO
// authentication fails.
var rejectToken = (&negTokenResp{negState: negStateReject}).marshal()
