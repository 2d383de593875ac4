// Queuing replies: signed and, for an encrypting session, sealed
// (crypt.go) before the writer goroutine sends them.

package smb

import (
	"fmt"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// enqueue hands one frame's parts to the writer goroutine.
func (c *conn) enqueue(parts ...[]byte) { c.out <- parts }

// send queues replies as one frame: a compound when there are several.
// Each PDU is signed over its own bytes; 3.1.1 preauth hashes see the
// PDU exactly as sent.
func (c *conn) send(reps []*reply) error {
	if len(reps) == 1 && reps[0].key == nil && reps[0].preauth == nil && reps[0].seal == nil {
		rp := reps[0]
		head := rp.hdr.AppendTo(make([]byte, 0, smb2.HeaderSize+len(rp.body)))
		c.enqueue(append(head, rp.body...), rp.data)
		return nil
	}
	pdus := make([][]byte, len(reps))
	for i, rp := range reps {
		p := rp.hdr.AppendTo(make([]byte, 0, smb2.HeaderSize+len(rp.body)+len(rp.data)))
		p = append(p, rp.body...)
		pdus[i] = append(p, rp.data...)
	}
	var spans [][]byte
	payload, err := smb2.BuildCompound(pdus, func(i int, pdu []byte) error {
		spans = append(spans, pdu)
		if reps[i].key == nil || reps[i].seal != nil {
			return nil
		}
		return smb2.Sign(pdu, reps[i].key, c.signAlg)
	})
	if err != nil {
		return fmt.Errorf("smb: building a response: %w", err)
	}
	for i, rp := range reps {
		if rp.preauth != nil {
			rp.preauth.Update(spans[i])
		}
	}
	c.enqueue(sealPayload(reps[0].seal, payload)) // crypt.go
	return nil
}
