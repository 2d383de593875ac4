package smb

import (
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// asyncOp is a request answered with an interim STATUS_PENDING whose
// final response comes later (MS-SMB2 3.3.4.2). CHANGE_NOTIFY completes
// when cancelled (STATUS_CANCELLED) or when its open closes
// (STATUS_NOTIFY_CLEANUP); changes are not reported. A blocking LOCK
// (lock.go) completes when granted, cancelled, or when its open closes
// (STATUS_RANGE_NOT_LOCKED).
type asyncOp struct {
	id     uint64
	hdr    smb2.Header // the request's
	sess   *session
	open   *open
	signed bool
	// lock is the range a blocking LOCK waits for (nil otherwise).
	lock []file.LockRange
}

// changeNotify answers CHANGE_NOTIFY (MS-SMB2 3.3.5.19) by going async.
func (c *conn) changeNotify(r *request) ([]byte, error) {
	req, err := smb2.DecodeChangeNotifyRequest(r.msg)
	if err != nil {
		return nil, err
	}
	if err := c.checkCharge(r, chargeNeeded(0, uint64(req.OutputBufferLength))); err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	if !o.f.Dir {
		return nil, smb2.StatusInvalidParameter
	}
	if o.f.GrantedAccess&file.AccessReadData == 0 {
		return nil, smb2.StatusAccessDenied
	}
	if len(c.async) >= maxAsyncPerConn {
		return nil, smb2.StatusInsufficientResources
	}
	c.nextAsync++
	a := &asyncOp{id: c.nextAsync, hdr: r.hdr, sess: r.sess, open: o, signed: r.signed}
	c.async[a.id] = a
	r.async = a
	return nil, errAsync
}

// cancel1 handles CANCEL (MS-SMB2 3.3.5.16): it has no response; the
// request it names, by AsyncId or MessageId, completes with
// STATUS_CANCELLED. Only asynchronous requests can still be pending.
func (c *conn) cancel1(hdr smb2.Header, msg []byte) {
	var target *asyncOp
	if hdr.Flags&smb2.FlagAsync != 0 {
		target = c.async[hdr.AsyncID]
	} else {
		for _, a := range c.async {
			if a.hdr.MessageID == hdr.MessageID {
				target = a
				break
			}
		}
	}
	if target == nil || target.sess.id != hdr.SessionID {
		return
	}
	if s := target.sess; s.signKey != nil && hdr.Flags&smb2.FlagSigned != 0 && !smb2.Verify(msg, s.signKey, c.signAlg) {
		return
	}
	c.finishAsync(target, smb2.StatusCancelled)
}

// finishNotifies completes the pending CHANGE_NOTIFYs of o with status,
// and its blocked LOCKs with STATUS_RANGE_NOT_LOCKED (smbd's answer when
// the open closes, its tree disconnects or its session logs off).
func (c *conn) finishNotifies(o *open, status smb2.Status) {
	for _, a := range c.async {
		if a.open == o {
			st := status
			if a.lock != nil {
				st = smb2.StatusRangeNotLocked
			}
			c.finishAsync(a, st)
		}
	}
}

// finishAsync sends the final response of a and forgets it. It grants
// no credits: the interim response did.
func (c *conn) finishAsync(a *asyncOp, status smb2.Status) {
	delete(c.async, a.id)
	hdr := a.hdr.Reply(status)
	hdr.Flags = hdr.Flags&^smb2.FlagRelated | smb2.FlagAsync
	hdr.AsyncID = a.id
	hdr.Credits = 0
	body := smb2.ErrorResponse{}.Encode()
	switch {
	case status.IsError():
	case a.lock != nil:
		body = smb2.LockResponse{}.Encode()
	default:
		body = smb2.ChangeNotifyResponse{}.Encode()
	}
	rep := &reply{hdr: hdr, body: body}
	if a.signed && a.sess.signKey != nil {
		rep.key = a.sess.signKey
	}
	if err := c.send([]*reply{rep}); err != nil {
		c.log.Warn("sending an async response failed", "err", err)
	}
}
