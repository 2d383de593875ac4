package smb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// Limits of one connection.
const (
	// preauthFrameMax bounds frames until a session has authenticated:
	// NEGOTIATE and NTLM tokens are a few KiB (limits.go).
	preauthFrameMax = 64 << 10
	// maxSessionsPerConn and maxOpensPerConn bound what a client can make
	// the server remember (STATUS_INSUFFICIENT_RESOURCES beyond them).
	maxSessionsPerConn = 64
	maxTreesPerSession = 1024
	maxOpensPerConn    = 16384
	maxAsyncPerConn    = 1024
	// writeTimeout drops a client that does not read its responses.
	writeTimeout = 2 * time.Minute
	// cleanupTimeout bounds closing a lost connection's handles.
	cleanupTimeout = 30 * time.Second
)

// errDrop asks the connection loop to close the connection without a
// response (MS-SMB2 prescribes a disconnect for some protocol errors).
type errDrop struct{ reason string }

func (e errDrop) Error() string { return "smb: dropping connection: " + e.reason }

func drop(format string, args ...any) error { return errDrop{fmt.Sprintf(format, args...)} }

// errAsync is returned by a handler that has gone asynchronous: it has
// registered an asyncOp and the reply is the interim STATUS_PENDING.
var errAsync = errors.New("smb: request went async")

// conn is one client connection. Its state is owned by the goroutine
// running serve; only close and the writer run elsewhere.
type conn struct {
	srv    *Server
	nc     net.Conn
	remote string
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc

	closeOnce  sync.Once
	out        chan [][]byte
	writerDone chan struct{}

	credits *creditWindow

	// NEGOTIATE outcome; dialect 0 until negotiated.
	dialect smb2.Dialect
	negReq  smb2.NegotiateRequest
	negResp smb2.NegotiateResponse
	signAlg smb2.SigningAlgorithm
	preauth smb2.PreauthHash
	maxIO   int
	crypt   connCrypt // encryption (crypt.go)
	// authenticated is set once any session of the connection has logged
	// on: it raises the frame limit.
	authenticated bool

	sessions     map[uint64]*session
	opens        map[uint64]*open // by FileId.Volatile
	nextVolatile uint64
	async        map[uint64]*asyncOp // by AsyncId
	nextAsync    uint64

	// Blocked locks (lock.go): wake is signalled when locks are released
	// on the server (nil until the first blocking lock); lockPoll
	// retries them every lockPollDelay.
	wake          chan struct{}
	lockPoll      *time.Timer
	lockPollDelay time.Duration
	// notifyWake is signalled when changes were queued on a watch of
	// one of the connection's opens (notify.go).
	notifyWake chan struct{}
	// closing is set once cleanup started: nothing more may be sent.
	closing bool
	// timers are the pre-authentication deadline and the idle timer
	// (limits.go).
	timers connTimers
}

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

// close closes the socket (from any goroutine): the reader and the writer
// then fail and serve cleans up.
func (c *conn) close() {
	c.closeOnce.Do(func() { c.nc.Close() })
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

// frameRead is a frame, or the error that ended reading.
type frameRead struct {
	payload []byte
	err     error
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

func (c *conn) frameLimit() int {
	if !c.authenticated {
		return preauthFrameMax
	}
	return min(c.maxIO+64<<10, smb2.MaxFrameSize)
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

func (c *conn) enqueue(parts ...[]byte) { c.out <- parts }

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

// closeSessionHandles closes every handle of s in the store (applying
// delete-on-close) and forgets its opens and async operations.
func (c *conn) closeSessionHandles(ctx context.Context, s *session) {
	for id, o := range c.opens {
		if o.sess == s {
			delete(c.opens, id)
			c.unwatch(o)
		}
	}
	for id, a := range c.async {
		if a.sess != s {
			continue
		}
		if a.lock != nil && !c.closing {
			// A blocked lock of a session logging off is answered
			// (smb2.lock.cancel-logoff).
			c.finishAsync(a, smb2.StatusRangeNotLocked)
			continue
		}
		delete(c.async, id)
	}
	if _, err := c.srv.vfs.CloseSession(ctx, s.vfsID); err != nil {
		c.log.Warn("closing the handles of an SMB session failed; they expire with the server's liveness", "session", s.vfsID, "err", err)
	}
	c.locksReleased()
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

// chainState carries what related operations of a compound inherit
// (MS-SMB2 3.3.5.2.7.2).
type chainState struct {
	sess      *session
	tree      *tree
	fileID    *smb2.FileID
	createErr error // a failed CREATE: later related ops on its FileId fail alike
	// sealed is the session whose key decrypted the frame (crypt.go);
	// nil for a frame that came in the clear.
	sealed *session
}

// request is one PDU being processed.
type request struct {
	hdr     smb2.Header
	msg     []byte
	charge  uint64
	related bool
	chain   *chainState
	sess    *session
	tree    *tree
	// signed: the request carried a valid signature.
	signed bool

	// Set by handlers for the reply.
	data         []byte            // bulk data after the body (READ)
	errData      []byte            // ErrorData of an error reply
	signKey      []byte            // overrides the session's key (final SESSION_SETUP)
	preauth      *smb2.PreauthHash // hash the reply into it (3.1.1)
	creditsExtra uint64            // credits beyond the charge the reply may grant
	async        *asyncOp          // the operation an interim reply announces
	dropAfter    bool              // close the connection once the reply is sent
}

// reply is one response PDU ready to send.
type reply struct {
	hdr     smb2.Header
	body    []byte
	data    []byte
	key     []byte
	preauth *smb2.PreauthHash
	// seal is the session whose key encrypts the reply (crypt.go); the
	// reply is then not signed.
	seal *session
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
	c.enqueue(seal(reps[0].seal, payload)) // crypt.go
	return nil
}
