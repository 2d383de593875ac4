package smb

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime/debug"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

func newConn(s *Server, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	remote := nc.RemoteAddr().String()
	return &conn{
		srv: s, nc: nc, remote: remote, log: s.log.With("client", remote),
		ctx: ctx, cancel: cancel,
		out: make(chan [][]byte, 8), writerDone: make(chan struct{}),
		credits:  newCreditWindow(maxCredits),
		sessions: map[uint64]*session{},
		opens:    map[uint64]*open{},
		async:    map[uint64]*asyncOp{},

		notifyWake: make(chan struct{}, 1),
	}
}

// serve runs the connection: read a frame, run its requests, queue the
// responses, and between frames retry blocked locks when woken or
// polled; then close every handle the connection's sessions hold. A
// reader goroutine reads one frame at a time, the next only once the
// previous one was handled (its size limit depends on the outcome), so
// all connection state stays on this goroutine.
func (c *conn) serve() {
	defer c.cleanup()
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("panic serving SMB connection; dropping it", "panic", p, "stack", string(debug.Stack()))
			if c.srv.onPanic != nil {
				c.srv.onPanic(p)
			}
		}
	}()
	c.startTimers()
	defer c.stopTimers()
	go c.writer()
	frames := make(chan frameRead)
	next := make(chan frameState)
	go c.reader(frames, next, c.frameState())
	for {
		select {
		case f := <-frames:
			if f.err != nil {
				if !errors.Is(f.err, io.EOF) && !errors.Is(f.err, net.ErrClosed) {
					c.log.Debug("SMB connection read failed", "err", f.err)
				}
				return
			}
			if err := c.handleFrame(f.payload); err != nil {
				c.log.Debug("dropping SMB connection", "err", err)
				return
			}
			c.frameDone()
			next <- c.frameState()
		case <-c.idleC():
			if c.idleExpired() {
				return
			}
		case <-c.wake:
			c.retryLocks(false)
		case <-c.lockPollC():
			c.retryLocks(true)
		case <-c.notifyWake:
			c.deliverNotifies()
		}
	}
}

// reader reads frames for serve: the first with st, each later one
// after serve sent the state for it on next (size limit, whether
// negotiated: checkHead). It ends after an error or when the
// connection's context ends.
func (c *conn) reader(frames chan<- frameRead, next <-chan frameState, st frameState) {
	for {
		payload, err := smb2.ReadFrameChecked(c.nc, st.limit, func(head []byte, _ int) error {
			return checkHead(st.negotiated, head)
		})
		select {
		case frames <- frameRead{payload, err}:
		case <-c.ctx.Done():
			return
		}
		if err != nil {
			return
		}
		select {
		case st = <-next:
		case <-c.ctx.Done():
			return
		}
	}
}

// writer sends queued frames in order. After a write error it closes the
// connection and discards the rest, so senders never block for good.
func (c *conn) writer() {
	defer close(c.writerDone)
	failed := false
	for parts := range c.out {
		if failed {
			continue
		}
		_ = c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := smb2.WriteFrame(c.nc, parts...); err != nil {
			failed = true
			c.close()
		}
	}
}

// cleanup runs when serve ends: it stops the writer and closes every
// handle of the connection's sessions in the store.
func (c *conn) cleanup() {
	c.closing = true
	c.srv.lockWake.remove(c)
	if c.lockPoll != nil {
		c.lockPoll.Stop()
	}
	// The writer sends what is queued (a reply before a deliberate drop)
	// unless the socket is already gone, then the socket closes.
	close(c.out)
	<-c.writerDone
	c.close()
	c.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	for _, s := range c.sessions {
		c.closeSessionHandles(ctx, s)
	}
}

// handleFrame runs the requests of one transport frame.
func (c *conn) handleFrame(payload []byte) error {
	switch smb2.ProtocolOf(payload) {
	case smb2.ProtocolSMB2:
		return c.handleSMB2(payload, nil)
	case smb2.ProtocolSMB1:
		return c.handleSMB1(payload)
	case smb2.ProtocolTransform:
		return c.handleTransform(payload) // crypt.go
	case smb2.ProtocolCompression:
		return drop("compressed message, but compression was not negotiated")
	}
	return drop("unknown protocol")
}

// handleSMB2 runs the requests of an SMB2 message or compound; sealed is
// the session that encrypted it (nil: it came in the clear).
func (c *conn) handleSMB2(payload []byte, sealed *session) error {
	pdus, err := smb2.SplitCompound(payload)
	if err != nil {
		return drop("%v", err)
	}
	chain := &chainState{sealed: sealed}
	replies := make([]*reply, 0, len(pdus))
	dropAfter := false
	for i, pdu := range pdus {
		r, rep, err := c.handlePDU(pdu, i, chain)
		if err != nil {
			return err
		}
		if rep != nil {
			replies = append(replies, rep)
		}
		if r != nil && r.dropAfter {
			dropAfter = true
		}
	}
	if len(replies) > 0 {
		if err := c.send(replies); err != nil {
			return err
		}
	}
	if dropAfter {
		// cleanup lets the writer send the reply before closing.
		return drop("closing after the reply")
	}
	return nil
}

// handlePDU runs one request of a frame and returns its reply (nil for
// CANCEL).
func (c *conn) handlePDU(pdu []byte, i int, chain *chainState) (*request, *reply, error) {
	hdr, err := smb2.ParseHeader(pdu)
	if err != nil {
		return nil, nil, drop("%v", err)
	}
	if hdr.IsResponse() {
		return nil, nil, drop("a response from the client")
	}
	if hdr.Command == smb2.CommandCancel {
		if c.dialect != 0 {
			c.cancel1(hdr, pdu)
		}
		return nil, nil, nil
	}
	charge := uint64(hdr.CreditCharge)
	if charge == 0 || c.dialect == smb2.Dialect202 {
		charge = 1
	}
	if !c.credits.consume(hdr.MessageID, charge) {
		return nil, nil, drop("MessageId %d (charge %d) outside the credit window", hdr.MessageID, charge)
	}
	if c.dialect == 0 && hdr.Command != smb2.CommandNegotiate {
		return nil, nil, drop("%v before NEGOTIATE", hdr.Command)
	}
	r := &request{hdr: hdr, msg: pdu, charge: charge, chain: chain, related: hdr.Flags&smb2.FlagRelated != 0, creditsExtra: maxCredits}
	if !r.related {
		// Only related operations inherit a FileId (smb2.compound.invalid3).
		chain.fileID, chain.createErr = nil, nil
	}
	start := time.Now()
	body, err := c.dispatch(r, i)
	if de := (errDrop{}); errors.As(err, &de) {
		return nil, nil, err
	}
	rep := c.buildReply(r, body, err)
	if obs := c.srv.cfg.Observer; obs != nil {
		obs.SMB(hdr.Command.String(), rep.hdr.Status.String(), time.Since(start))
	}
	return r, rep, nil
}

// commandInfo says what a command needs before its handler runs.
type commandInfo struct {
	handler func(c *conn, r *request) ([]byte, error)
	session bool // a valid session (USER_SESSION_DELETED otherwise)
	tree    bool // a tree of that session (NETWORK_NAME_DELETED otherwise)
}

var commands map[smb2.Command]commandInfo

func init() {
	commands = map[smb2.Command]commandInfo{
		smb2.CommandNegotiate:      {handler: (*conn).negotiate},
		smb2.CommandSessionSetup:   {handler: (*conn).sessionSetup},
		smb2.CommandLogoff:         {handler: (*conn).logoff, session: true},
		smb2.CommandTreeConnect:    {handler: (*conn).treeConnect, session: true},
		smb2.CommandTreeDisconnect: {handler: (*conn).treeDisconnect, session: true, tree: true},
		smb2.CommandCreate:         {handler: (*conn).create, session: true, tree: true},
		smb2.CommandClose:          {handler: (*conn).closeFile, session: true, tree: true},
		smb2.CommandFlush:          {handler: (*conn).flush, session: true, tree: true},
		smb2.CommandRead:           {handler: (*conn).read, session: true, tree: true},
		smb2.CommandWrite:          {handler: (*conn).write, session: true, tree: true},
		smb2.CommandLock:           {handler: (*conn).lock, session: true, tree: true},
		smb2.CommandIoctl:          {handler: (*conn).ioctl, session: true, tree: true},
		smb2.CommandEcho:           {handler: (*conn).echo},
		smb2.CommandQueryDirectory: {handler: (*conn).queryDirectory, session: true, tree: true},
		smb2.CommandChangeNotify:   {handler: (*conn).changeNotify, session: true, tree: true},
		smb2.CommandQueryInfo:      {handler: (*conn).queryInfo, session: true, tree: true},
		smb2.CommandSetInfo:        {handler: (*conn).setInfo, session: true, tree: true},
		smb2.CommandOplockBreak:    {handler: (*conn).oplockBreak, session: true, tree: true},
	}
}

// dispatch checks the session, tree and signature of r and runs its
// handler.
func (c *conn) dispatch(r *request, i int) ([]byte, error) {
	info, ok := commands[r.hdr.Command]
	if !ok {
		return nil, smb2.StatusInvalidParameter
	}
	if r.related && i == 0 {
		// The first request of a compound cannot be related
		// (MS-SMB2 3.3.5.2.7.2).
		return nil, smb2.StatusInvalidParameter
	}
	if err := c.resolve(r, info); err != nil {
		if r.hdr.Command == smb2.CommandEcho || r.hdr.Command == smb2.CommandNegotiate {
			// These need no session: answer them anyway, unsigned.
			r.sess, r.tree = nil, nil
		} else {
			return nil, err
		}
	}
	if r.sess != nil {
		r.chain.sess = r.sess
	}
	if r.tree != nil {
		r.chain.tree = r.tree
	}
	return info.handler(c, r)
}

// resolve finds r's session and tree (from the compound chain for a
// related request) and checks the request's signature.
func (c *conn) resolve(r *request, info commandInfo) error {
	sid, tid := r.hdr.SessionID, r.hdr.TreeID
	if r.related {
		if r.chain.sess == nil && (info.session || sid == ^uint64(0)) {
			return smb2.StatusInvalidParameter
		}
		if r.chain.sess != nil {
			sid = r.chain.sess.id
		}
		if info.tree {
			if r.chain.tree == nil {
				return smb2.StatusInvalidParameter
			}
			tid = r.chain.tree.id
		}
	}
	if sid != 0 {
		s, ok := c.sessions[sid]
		switch {
		case !ok:
			if info.session || r.hdr.Command == smb2.CommandSessionSetup {
				return smb2.StatusUserSessionDeleted
			}
		default:
			r.sess = s
		}
	}
	if r.sess != nil {
		if err := c.checkProtection(r); err != nil { // crypt.go
			return err
		}
	}
	if info.session {
		if r.sess == nil {
			return smb2.StatusUserSessionDeleted
		}
		if !r.sess.valid {
			return smb2.StatusAccessDenied
		}
	}
	if info.tree {
		t, ok := r.sess.trees[tid]
		if !ok {
			return smb2.StatusNetworkNameDeleted
		}
		r.tree = t
	}
	return nil
}

// statusOf maps a handler error to the NTSTATUS of the reply.
func (c *conn) statusOf(r *request, err error) smb2.Status {
	if st, ok := smb2.AsStatus(err); ok {
		return st
	}
	if st, ok := fileStatus(err); ok {
		if st == smb2.StatusBadNetworkName && r.hdr.Command != smb2.CommandTreeConnect {
			st = smb2.StatusNetworkNameDeleted
		}
		return st
	}
	if errors.Is(err, context.Canceled) {
		return smb2.StatusCancelled
	}
	// The in-memory chunk store (--in-memory) is at its limit: the
	// volume is full, as a disk would be (MS-ERREF 2.3.1
	// STATUS_DISK_FULL).
	var full *chunk.FullError
	if errors.As(err, &full) {
		return smb2.StatusDiskFull
	}
	c.log.Error("SMB request failed", "command", r.hdr.Command, "err", err)
	return smb2.StatusInternalError
}

// buildReply turns a handler's result into the reply PDU: status, body,
// credits and signing key.
func (c *conn) buildReply(r *request, body []byte, err error) *reply {
	status := smb2.StatusSuccess
	if err == errAsync {
		status = smb2.StatusPending
	} else if err != nil {
		status = c.statusOf(r, err)
		if r.hdr.Command == smb2.CommandCreate {
			r.chain.createErr = status
		}
	}
	hdr := r.hdr.Reply(status)
	if status == smb2.StatusPending && r.async != nil {
		hdr.Flags |= smb2.FlagAsync
		hdr.AsyncID = r.async.id
	}
	// A handler that fails returns no body; one that returns a body with
	// a status (MORE_PROCESSING_REQUIRED, BUFFER_OVERFLOW) sends both.
	if err != nil && (body == nil || status == smb2.StatusPending) {
		body = smb2.ErrorResponse{ErrorData: r.errData}.Encode()
		r.data = nil
	}
	hdr.Credits = c.credits.grant(r.hdr.CreditCharge, r.hdr.Credits, r.creditsExtra)
	rep := &reply{hdr: hdr, body: body, data: r.data, preauth: r.preauth, seal: sealFor(r)}
	switch {
	case r.signKey != nil:
		rep.key = r.signKey
	case status == smb2.StatusPending || status == smb2.StatusUserSessionDeleted:
	case r.sess != nil && r.sess.signKey != nil && (r.signed || r.sess.signRequired):
		rep.key = r.sess.signKey
	}
	return rep
}

// handleTransform decrypts an encrypted frame and runs the message (one
// request or a compound) it carries; the replies go back encrypted in one
// transform. Whatever cannot be decrypted ends the connection (MS-SMB2
// 3.3.5.2.1.1).
func (c *conn) handleTransform(payload []byte) error {
	if c.crypt.cipher == 0 {
		return drop("encrypted message, but encryption was not negotiated")
	}
	h, err := smb2.ParseTransformHeader(payload)
	if err != nil {
		return drop("%v", err)
	}
	s, ok := c.sessions[h.SessionID]
	if !ok || !s.valid || s.crypt.in == nil {
		return drop("encrypted message for session %#x, which has no keys", h.SessionID)
	}
	msg, err := smb2.Decrypt(s.crypt.in, h, payload)
	if err != nil {
		return drop("%v", err)
	}
	if smb2.ProtocolOf(msg) != smb2.ProtocolSMB2 {
		return drop("encrypted message is not SMB2")
	}
	return c.handleSMB2(msg, s)
}
