// The server's and each connection's state, with the types every command
// handler reads and writes (Config, Server, conn, session, tree, open, the
// asynchronous operations and watches) and the connection's limits. The
// handlers are in the files named after their commands; conn.go, above
// them, reads frames and dispatches, and server.go accepts connections.

package smb

import (
	"context"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/ntlm"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
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

// frameRead is a frame, or the error that ended reading.
type frameRead struct {
	payload []byte
	err     error
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

// Config configures a Server.
type Config struct {
	// FS is the File service's VFS whose shares are served (required),
	// e.g. smbfs.New(fileService, DefaultOwner()). Its owner id is the
	// liveness identity of this server's handles and must be unique
	// among live servers.
	FS FileSystem
	// Accounts are the storage accounts that may log on: user = account
	// name (any case), password = one of its keys as base64 text.
	Accounts []auth.Account
	// Clock is the NTLM challenge timestamp's source (default the wall
	// clock). The VFS decides liveness with the File service's clock.
	Clock  clock.Clock
	Logger *slog.Logger
	// HeartbeatEvery is how often the owner's liveness is renewed
	// (default 10 s); each heartbeat extends it by three intervals.
	HeartbeatEvery time.Duration
	// MaxIOSize is the MaxReadSize, MaxWriteSize and MaxTransactSize
	// offered to clients (default and ceiling file.MaxIOSize).
	MaxIOSize int
	// ServerName is the NetBIOS name in the NTLM challenge (default
	// "CERULEAN").
	ServerName string
	// Observer, if set, sees every request answered (metrics).
	Observer Observer
	// RequireSigning makes NEGOTIATE answer SIGNING_REQUIRED and every
	// session refuse requests neither signed nor encrypted
	// (STATUS_ACCESS_DENIED; MS-SMB2 3.3.5.2.4). Guest and anonymous
	// logons are always refused.
	RequireSigning bool
	// Encrypt is when SMB 3 sessions are encrypted (crypt.go; default
	// EncryptOff). It applies to every share.
	Encrypt EncryptMode

	// Connection limits (limits.go). MaxConns and MaxConnsPerAddr cap
	// the connections in all and from one IP address (0: 1024 and 64;
	// negative: no cap); a connection beyond them is closed at once.
	MaxConns        int
	MaxConnsPerAddr int
	// PreauthTimeout closes a connection that has not completed a
	// SESSION_SETUP this long after it was accepted (0: 30 s; negative:
	// never).
	PreauthTimeout time.Duration
	// IdleTimeout closes an authenticated connection with no open file
	// and no pending operation that has sent nothing for this long (0:
	// 15 minutes, as Windows' autodisconnect; negative: never).
	IdleTimeout time.Duration
}

// Observer sees each SMB2 request once it is answered: its command, the
// NTSTATUS of the reply (an asynchronous operation's interim
// STATUS_PENDING; its final reply is not observed) and the time taken.
// Requests that end the connection (malformed, outside the credit
// window) are not observed.
type Observer interface {
	SMB(command, status string, d time.Duration)
}

// Server is an SMB2/3 server. It is safe for concurrent use.
type Server struct {
	cfg   Config
	log   *slog.Logger
	vfs   FileSystem
	auth  *ntlm.Server
	guid  [16]byte
	maxIO int

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	closing   bool
	started   bool
	hbStop    chan struct{}
	hbDone    chan struct{}
	connWG    sync.WaitGroup

	// lockWake wakes the connections with blocked locks (lock.go).
	lockWake lockWaiters
	// notify holds the change-notify watches of every open (notify.go).
	notify notifyHub

	// accepting is what the accept loops report to Ready (accept.go).
	accepting acceptState
	// admit counts connections by client address (limits.go).
	admit admission

	// onPanic, if set (tests), sees every panic a connection recovered.
	onPanic func(any)
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("smb: server closed")

// session is an SMB2 session: an authentication and what it opened.
type session struct {
	id uint64
	// vfsID names the session in the store's handle records (List
	// Handles' SessionId, VFS.CloseSession): the SessionId in decimal.
	vfsID string
	auth  *ntlm.Auth
	// valid is set once authenticated; account is the storage account.
	valid        bool
	account      string
	signKey      []byte
	signRequired bool
	preauth      smb2.PreauthHash
	crypt        sessionCrypt // encryption (crypt.go)
	trees        map[uint32]*tree
	nextTree     uint32
}

// tree is a tree connect: a share of the session's account, or IPC$.
type tree struct {
	id    uint32
	share string // lower case; "" for IPC$
	ipc   bool
	sess  *session
}

// maxNTFSFileSize is the largest file NTFS allows (16 TiB - 64 KiB):
// Windows and smbd refuse writes beyond it with STATUS_INVALID_PARAMETER.
const maxNTFSFileSize = 0xfffffff0000

// open is an SMB2 open: a VFS handle and the per-open state SMB keeps.
type open struct {
	id   smb2.FileID
	f    *file.Open
	sess *session
	tree *tree
	// mode is FileModeInformation (the CreateOptions mode bits, or as
	// set); position is FilePositionInformation.
	mode     uint32
	position int64
	dir      *dirCursor
	// watch is the change-notify watch of a directory open, from its
	// first CHANGE_NOTIFY (notify.go).
	watch *watch
}

// asyncOp is a request answered with an interim STATUS_PENDING whose
// final response comes later (MS-SMB2 3.3.4.2). CHANGE_NOTIFY completes
// with the changes reported on its open's watch (below), or when
// cancelled (STATUS_CANCELLED) or its open closes (STATUS_NOTIFY_CLEANUP).
// A blocking LOCK (lock.go) completes when granted, cancelled, or when
// its open closes (STATUS_RANGE_NOT_LOCKED).
type asyncOp struct {
	id     uint64
	hdr    smb2.Header // the request's
	sess   *session
	open   *open
	signed bool
	// lock is the range a blocking LOCK waits for (nil otherwise).
	lock []file.LockRange
	// outLen is a CHANGE_NOTIFY's OutputBufferLength.
	outLen uint32
}

// maxNotifyBuffer bounds the changes a watch keeps (bytes encoded).
const maxNotifyBuffer = 64 << 10

// notifyHub holds the watches of a server's opens, by share.
type notifyHub struct {
	mu      sync.Mutex
	watches map[string]map[*watch]struct{}
}

// watch is the change-notify state of one directory open.
type watch struct {
	c      *conn
	key    string   // shareKey of the open
	path   []string // the directory's share-relative path
	tree   bool     // SMB2_WATCH_TREE
	filter uint32   // CompletionFilter
	limit  int      // bytes of changes kept

	// Guarded by notifyHub.mu.
	changes  []smb2.FileNotifyInformation
	size     int
	overflow bool
}

// change is one change to report: the entry's path, what happened and
// the CompletionFilter bits it matches.
type change struct {
	path   []string
	action uint32
	filter uint32
}

// lockWaiters are the connections of a server with blocked locks: a
// release anywhere on the server wakes them.
type lockWaiters struct {
	mu    sync.Mutex
	conns map[*conn]chan struct{}
}

// dirCursor is the enumeration state of a directory open (MS-SMB2
// 3.3.5.18): the search pattern and where the listing stands. "." and
// ".." come first, then the entries in the VFS's name order. Each query
// reads the directory afresh from the last name returned, so entries
// deleted or created meanwhile (by this or another client, or REST) are
// seen as they are now (smb2.dir.fixed).
type dirCursor struct {
	pattern  string // as sent, for an exact lookup
	upper    []rune // upper-cased pattern for matching
	wild     bool
	dots     int    // how many of ".", ".." have been dealt with
	after    string // last name returned
	done     bool   // nothing more to return
	returned bool   // some entry has been returned since the (re)start
}

// admission counts the connections of a Server by client address. It is
// guarded by Server.mu.
type admission struct {
	perAddr map[string]int
	// refused counts refusals since the last log line, lastLog is when
	// that line was written.
	refused int
	lastLog time.Time
}

// connTimers are a connection's pre-authentication deadline and idle
// timer; both run on serve's goroutine except the deadline's close.
type connTimers struct {
	preauth *time.Timer
	// idle runs once the connection has authenticated; lastFrame is
	// when the last frame was handled.
	idle      *time.Timer
	lastFrame time.Time
}

// frameState is what the reader needs to check the next frame.
type frameState struct {
	limit      int
	negotiated bool
}

// EncryptMode is when the server encrypts SMB 3 sessions (MS-SMB2
// 3.3.1.5 EncryptData and RejectUnencryptedAccess).
type EncryptMode int

// Encryption modes.
const (
	// EncryptOff offers no encryption (no ENCRYPTION capability or
	// negotiate context); clients that require it cannot connect.
	EncryptOff EncryptMode = iota
	// EncryptDesired encrypts every session of a client that can
	// (SMB 3.x with a cipher in common) and serves the others in the
	// clear: EncryptData without RejectUnencryptedAccess.
	EncryptDesired
	// EncryptRequired encrypts every session and refuses the logon of a
	// client that cannot encrypt (STATUS_ACCESS_DENIED): EncryptData
	// with RejectUnencryptedAccess.
	EncryptRequired
)

// connCrypt is a connection's encryption state.
type connCrypt struct {
	// cipher is Connection.CipherId: 0 when the connection cannot
	// encrypt.
	cipher uint16
}

// sessionCrypt is a session's encryption state.
type sessionCrypt struct {
	// encrypt is Session.EncryptData: every request must come encrypted.
	encrypt bool
	// out encrypts what the server sends, in decrypts what it receives;
	// nil when the connection negotiated no cipher.
	out, in cipher.AEAD
	// nonces: an 8-byte counter, then random bytes, so that no nonce
	// repeats under the session's key (MS-SMB2 3.1.4.3).
	nonceSalt [8]byte
	sent      atomic.Uint64
}

// acceptState is what the accept loops tell Ready. Its own lock: Ready
// is called from the metrics server while the loops run.
type acceptState struct {
	mu sync.Mutex
	// dead is the error that ended a listener's loop outside Shutdown.
	dead error
	// failing is the error of a listener whose last accept failed with
	// an error not known to pass, by listener.
	failing map[net.Listener]error
}

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

// close closes the socket (from any goroutine): the reader and the writer
// then fail and serve cleans up.
func (c *conn) close() {
	c.closeOnce.Do(func() { c.nc.Close() })
}

// ParseEncryptMode parses "off", "desired" or "required" ("" is off).
func ParseEncryptMode(s string) (EncryptMode, error) {
	switch s {
	case "", "off":
		return EncryptOff, nil
	case "desired":
		return EncryptDesired, nil
	case "required":
		return EncryptRequired, nil
	}
	return EncryptOff, fmt.Errorf("SMB encryption %q: want off, desired or required", s)
}

func (m EncryptMode) String() string {
	switch m {
	case EncryptOff:
		return "off"
	case EncryptDesired:
		return "desired"
	case EncryptRequired:
		return "required"
	}
	return fmt.Sprintf("EncryptMode(%d)", int(m))
}

// nonce returns the next nonce of s.
func (s *sessionCrypt) nonce() []byte {
	n := make([]byte, s.out.NonceSize())
	binary.LittleEndian.PutUint64(n, s.sent.Add(1))
	copy(n[8:], s.nonceSalt[:])
	return n
}
