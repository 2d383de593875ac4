package smb2

import "errors"

// SplitCompound splits a transport payload into its PDUs by following the
// NextCommand chain (MS-SMB2 3.3.5.2.7). A single request is a chain of
// one. Each returned slice aliases payload and spans one PDU: for all but
// the last, exactly NextCommand bytes (the PDU and its padding, which is
// what the sender signed); the last runs to the end of the payload.
//
// Every NextCommand must be a multiple of 8 and leave room for another
// 64-byte header inside the payload, and every PDU must start with the
// SMB2 ProtocolId; otherwise the error is a *MalformedError and the
// connection should be dropped, since there is no way to answer the
// remaining PDUs.
func SplitCompound(payload []byte) ([][]byte, error) {
	var pdus [][]byte
	pos := 0
	for {
		rest := payload[pos:]
		if len(rest) < HeaderSize {
			return nil, malformedStruct("compound", "PDU shorter than the header")
		}
		if le.Uint32(rest) != protocolSMB2 {
			return nil, malformedStruct("compound", "PDU does not start with FE 'SMB'")
		}
		next := uint64(le.Uint32(rest[offNextCommand:]))
		if next == 0 {
			return append(pdus, rest), nil
		}
		if next%8 != 0 {
			return nil, malformedStruct("compound", "NextCommand is not 8-byte aligned")
		}
		if next < HeaderSize || next+HeaderSize > uint64(len(rest)) {
			return nil, malformedStruct("compound", "NextCommand points outside the payload")
		}
		pdus = append(pdus, rest[:next:next])
		pos += int(next)
	}
}

// BuildCompound concatenates response PDUs into one transport payload
// (MS-SMB2 3.3.4.1.3): each PDU but the last is padded with zeros to a
// multiple of 8 bytes and its NextCommand set to its padded length; the
// last gets NextCommand 0. The inputs are not modified.
//
// sign, if not nil, is called for every PDU after its NextCommand and
// padding are in place, with the PDU's slice of the result (padding
// included), so that it can sign it in place: each PDU of a compound is
// signed separately over its own bytes. A sign error aborts the build.
func BuildCompound(pdus [][]byte, sign func(i int, pdu []byte) error) ([]byte, error) {
	if len(pdus) == 0 {
		return nil, errors.New("smb2: empty compound")
	}
	total := 0
	for i, p := range pdus {
		if len(p) < HeaderSize {
			return nil, errors.New("smb2: compound PDU shorter than the header")
		}
		if i < len(pdus)-1 {
			total += align8(len(p))
		} else {
			total += len(p)
		}
	}
	if total > MaxFrameSize {
		return nil, errors.New("smb2: compound exceeds the maximum frame size")
	}
	out := make([]byte, total)
	pos := 0
	starts := make([]int, len(pdus)+1)
	for i, p := range pdus {
		starts[i] = pos
		copy(out[pos:], p)
		n := len(p)
		if i < len(pdus)-1 {
			n = align8(n)
			le.PutUint32(out[pos+offNextCommand:], uint32(n))
		} else {
			le.PutUint32(out[pos+offNextCommand:], 0)
		}
		pos += n
	}
	starts[len(pdus)] = total
	if sign != nil {
		for i := range pdus {
			if err := sign(i, out[starts[i]:starts[i+1]]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
