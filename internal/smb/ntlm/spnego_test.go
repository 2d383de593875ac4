package ntlm

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	ntlmssp "github.com/Azure/go-ntlmssp"
)

func TestReadTLVLengths(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		ok   bool
		val  []byte
	}{
		{"short", []byte{0x04, 0x02, 'a', 'b', 'x'}, true, []byte("ab")},
		{"long form one byte", []byte{0x04, 0x81, 0x02, 'a', 'b'}, true, []byte("ab")},
		{"long form non-minimal", []byte{0x04, 0x83, 0, 0, 0x02, 'a', 'b'}, true, []byte("ab")},
		{"indefinite", []byte{0x30, 0x80, 0, 0}, false, nil},
		{"five length bytes", []byte{0x04, 0x85, 0, 0, 0, 0, 1, 'a'}, false, nil},
		{"overrun", []byte{0x04, 0x03, 'a', 'b'}, false, nil},
		{"long form overrun", []byte{0x04, 0x82, 0xff, 0xff, 'a'}, false, nil},
		{"high tag number", []byte{0x1f, 0x01, 0x00}, false, nil},
		{"one byte", []byte{0x04}, false, nil},
	}
	for _, c := range cases {
		_, val, _, _, err := readTLV(c.in)
		if (err == nil) != c.ok || !bytes.Equal(val, c.val) {
			t.Errorf("%s: val %x err %v", c.name, val, err)
		}
	}
}

func TestTLVEncodesLengths(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 255, 256, 65535, 65536} {
		b := tlv(0x04, make([]byte, n))
		tag, val, whole, rest, err := readTLV(b)
		if err != nil || tag != 0x04 || len(val) != n || len(whole) != len(b) || len(rest) != 0 {
			t.Errorf("n=%d: %v", n, err)
		}
	}
}

// TestParseSPNEGOTolerance: quirks real clients produce must not break the
// parser, and the mechListMIC input must be the mechTypes bytes as sent.
func TestParseSPNEGOTolerance(t *testing.T) {
	neg := []byte("NTLMSSP\x00\x01\x00\x00\x00\x15\x82\x08\x62")
	mechTypes := tlv(0x30, tlv(0x06, oidNTLMSSP))
	// Non-minimal long-form lengths in the MechTypeList, reqFlags and an
	// unknown field, trailing bytes after the token.
	oddMechTypes := []byte{0x30, 0x81, 0x0c}
	oddMechTypes = append(oddMechTypes, tlv(0x06, oidNTLMSSP)...)
	init := tlv(0x60, tlv(0x06, oidSPNEGO), tlv(0xa0, tlv(0x30,
		tlv(0xa0, oddMechTypes),
		tlv(0xa1, tlv(0x03, []byte{0, 0})),
		tlv(0xa2, tlv(0x04, neg)),
		tlv(0xa7, tlv(0x05)),
	)))
	init = append(init, 0, 0)
	got, resp, err := parseSPNEGO(init)
	if err != nil || resp != nil {
		t.Fatalf("parse: %v", err)
	}
	if !bytes.Equal(got.mechTypesDER, oddMechTypes) || len(got.mechTypes) != 1 || !bytes.Equal(got.mechToken, neg) {
		t.Errorf("got %+v", got)
	}
	// A bare negTokenInit without the GSS wrapper.
	got, _, err = parseSPNEGO(tlv(0xa0, tlv(0x30, tlv(0xa0, mechTypes))))
	if err != nil || !bytes.Equal(got.mechTypesDER, mechTypes) || got.mechToken != nil {
		t.Errorf("bare negTokenInit: %+v %v", got, err)
	}
	bad := map[string][]byte{
		"other GSS mechanism":        tlv(0x60, tlv(0x06, oidNTLMSSP), tlv(0xa0, tlv(0x30, tlv(0xa0, mechTypes)))),
		"no mechTypes":               tlv(0xa0, tlv(0x30, tlv(0xa2, tlv(0x04, neg)))),
		"mechTypes not a SEQUENCE":   tlv(0xa0, tlv(0x30, tlv(0xa0, tlv(0x31, tlv(0x06, oidNTLMSSP))))),
		"mechType not an OID":        tlv(0xa0, tlv(0x30, tlv(0xa0, tlv(0x30, tlv(0x04, oidNTLMSSP))))),
		"negState out of range":      tlv(0xa1, tlv(0x30, tlv(0xa0, tlv(0x0a, []byte{7})))),
		"mechToken not OCTET STRING": tlv(0xa1, tlv(0x30, tlv(0xa2, tlv(0x03, neg)))),
		"unknown choice":             tlv(0xa2, tlv(0x30)),
	}
	for name, b := range bad {
		if _, _, err := parseSPNEGO(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNegTokenRespRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte{0xab}, 300) // long-form lengths
	for _, r := range []negTokenResp{
		{negState: negStateAbsent},
		{negState: negStateAcceptCompleted, mechListMIC: []byte{1, 2}},
		{negState: negStateAcceptIncomplete, supportedMech: oidNTLMSSP, responseToken: big},
		{negState: negStateReject},
		{negState: negStateRequestMIC, supportedMech: oidNTLMSSP},
	} {
		_, got, err := parseSPNEGO(r.marshal())
		if err != nil || !respEqual(got, &r) {
			t.Errorf("%+v: got %+v, %v", r, got, err)
		}
	}
}

func respEqual(a, b *negTokenResp) bool {
	return a.negState == b.negState && bytes.Equal(a.supportedMech, b.supportedMech) &&
		bytes.Equal(a.responseToken, b.responseToken) && bytes.Equal(a.mechListMIC, b.mechListMIC) &&
		(a.responseToken == nil) == (b.responseToken == nil) && (a.mechListMIC == nil) == (b.mechListMIC == nil)
}

func TestNegotiateFlags(t *testing.T) {
	cases := []struct {
		name         string
		client, want uint32
	}{
		// smbd's answer to smbclient, from the captures.
		{"smbclient", smbclientFlags, 0x628a8215},
		// go-ntlmssp: no signing, no key exchange, no version.
		{"go-ntlmssp", 0xa0888201, 0xa0888201},
		{"LM_KEY is never granted", flagUnicode | flagNTLM | flagLMKey, flagUnicode | flagNTLM | flagTargetInfo},
		{"OEM only", flagOEM | flagNTLM, flagOEM | flagNTLM | flagTargetInfo},
		{"both charsets: Unicode wins", flagOEM | flagUnicode, flagUnicode | flagTargetInfo},
	}
	if neg, err := ntlmssp.NewNegotiateMessage("", ""); err != nil || binary.LittleEndian.Uint32(neg[12:]) != cases[1].client {
		t.Fatalf("go-ntlmssp's NEGOTIATE flags changed: %x %v", neg, err)
	}
	for _, c := range cases {
		if got := negotiateFlags(c.client); got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
	}
}

func TestBuildChallengeLayout(t *testing.T) {
	when := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	for _, flags := range []uint32{0x628a8215, flagUnicode | flagTargetInfo, flagOEM | flagRequestTarget | flagTargetInfo} {
		b := buildChallenge(challengeParams{flags: flags, challenge: [8]byte{1, 2, 3, 4, 5, 6, 7, 8},
			targetName: "SRV", nbDomain: "DOM", nbComputer: "SRV", dnsName: "srv.example", now: when})
		if typ, err := messageType(b); err != nil || typ != msgChallenge {
			t.Fatalf("type %d %v", typ, err)
		}
		if got := binary.LittleEndian.Uint32(b[20:]); got != flags {
			t.Errorf("flags %#x", got)
		}
		nameLen, nameOff := binary.LittleEndian.Uint16(b[12:]), binary.LittleEndian.Uint32(b[16:])
		infoLen, infoOff := binary.LittleEndian.Uint16(b[40:]), binary.LittleEndian.Uint32(b[44:])
		hdr := uint32(48)
		if flags&flagVersion != 0 {
			hdr = 56
		}
		if nameOff != hdr || infoOff != hdr+uint32(nameLen) || int(infoOff)+int(infoLen) != len(b) {
			t.Errorf("flags %#x: name %d@%d info %d@%d in %d bytes", flags, nameLen, nameOff, infoLen, infoOff, len(b))
		}
		name, _ := decodeString(b[nameOff:nameOff+uint32(nameLen)], flags)
		if want := map[bool]string{true: "SRV", false: ""}[flags&flagRequestTarget != 0]; name != want {
			t.Errorf("flags %#x: target name %q", flags, name)
		}
		pairs, err := parseAVPairs(b[infoOff:])
		if err != nil || len(pairs) != 5 {
			t.Fatalf("AV pairs %v %v", pairs, err)
		}
		ids := []uint16{avNbDomainName, avNbComputerName, avDNSDomainName, avDNSComputerName, avTimestamp}
		for i, p := range pairs {
			if p.id != ids[i] {
				t.Errorf("pair %d is %d", i, p.id)
			}
		}
		if got := fromFiletime(binary.LittleEndian.Uint64(pairs[4].val)); !got.Equal(when.Truncate(100)) {
			t.Errorf("timestamp %v", got)
		}
		if dns, _ := decodeString(pairs[3].val, flagUnicode); dns != "srv.example" {
			t.Errorf("DNS name %q", dns)
		}
	}
}

func TestFiletime(t *testing.T) {
	// 2001-01-01 is 12622780800 seconds after 1601-01-01.
	if got := filetime(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)); got != 126227808000000000 {
		t.Errorf("filetime %d", got)
	}
}
