// Package queue implements the Azure Queue service over the kv store.
//
// Every request's checks and writes happen in one kv transaction, and all
// expiry (visibility timeouts, message TTLs) is computed from the
// request's time, taken from the injected clock. The service keeps no
// authoritative state in memory, so several processes may share one
// store; the only in-memory state is a hint that spreads concurrent Get
// Messages calls over different messages (see dequeue.go). The key layout
// is described in model.go and in docs/architecture.md ("Queue").
package queue

import (
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Service is the Queue service of one Cerulean process.
type Service struct {
	store kv.Store
	clock clock.Clock
	log   *slog.Logger
	// reclaimer, when set (SetReclaimer), purges deleted and cleared
	// incarnations in the background.
	reclaimer *reclaim.Reclaimer
	// lastSeq is the last insertion sequence number handed out (see
	// nextSeq).
	lastSeq atomic.Uint64
	// load tracks the Get Messages calls in flight per queue.
	load loadTracker
	// shardOffset is this process's random choice of the visibility-index
	// shard its second concurrent consumer of a queue starts at, so that
	// consumers in different processes spread differently (dequeue.go).
	shardOffset int
}

// New returns the Queue service over store.
func New(store kv.Store, clk clock.Clock, log *slog.Logger) *Service {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.Default()
	}
	return &Service{store: store, clock: clk, log: log, shardOffset: rand.IntN(numShards)}
}

// req is a parsed Queue request.
type req struct {
	*server.Request
	q     url.Values
	queue string // "" for account-level requests
	// sub is what follows the queue name: "" (the queue), "messages" or
	// "messages/{id}".
	sub   string
	msgID string // raw message id from the path
	// opName is the routed operation's name, route its entry in
	// queueRoutes.
	opName string
	route  *route
}

// ServeAzure routes a Queue REST request to its operation. Anonymous requests
// are refused before anything is read: the Queue service has no public access
// (Authorize requests to Azure Storage,
// https://learn.microsoft.com/en-us/rest/api/storageservices/authorize-requests-to-azure-storage).
func (s *Service) ServeAzure(w http.ResponseWriter, sr *server.Request) error {
	if !sr.Authenticated && sr.SAS == nil {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	r := newReq(sr)
	rt, err := s.route(r)
	if err != nil {
		return r.SASFirst(err, server.SASTarget{Container: r.queue}, s.policies(r))
	}
	if sr.SAS != nil {
		if err := s.authorizeSAS(r); err != nil {
			return err
		}
	}
	return rt.Handler(s, w, r)
}

// newReq parses what routing needs from sr: the queue and what follows it.
func newReq(sr *server.Request) *req {
	r := &req{Request: sr, q: sr.URL.Query()}
	// The path is /{account}[/{queue}[/messages[/{id}]]]; the middleware
	// took the account.
	path := strings.TrimPrefix(sr.URL.Path, "/")
	if i := strings.IndexByte(path, '/'); i >= 0 {
		rest := path[i+1:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			r.queue, r.sub = rest[:j], rest[j+1:]
		} else {
			r.queue = rest
		}
	}
	return r
}

// route finds r's operation in queueRoutes and records it on r. The
// queue name, the message path and peekonly are checked first, with
// their own errors.
func (s *Service) route(r *req) (*route, error) {
	sel := queueRoutes.Selectors(r.q)
	m := server.MethodOf(r.Method)
	level := lAccount
	if r.queue != "" {
		if err := wire.ValidQueueName(r.queue); err != nil {
			return nil, err
		}
		switch {
		case r.sub == "":
			level = lQueue
		case r.sub == "messages":
			level = lMessages
			if m == server.GET {
				if _, err := parsePeekOnly(r.q); err != nil {
					return nil, err
				}
			}
		case strings.HasPrefix(r.sub, "messages/") && !strings.Contains(r.sub[len("messages/"):], "/"):
			r.msgID = r.sub[len("messages/"):]
			if r.msgID == "" {
				return nil, azerr.New(azerr.InvalidURI)
			}
			level = lMessage
		default:
			return nil, azerr.New(azerr.InvalidURI)
		}
	}
	rt := queueRoutes.Match(m, level, &sel, r.Header, r.q)
	if rt == nil {
		return nil, server.NoRoute(sel.Comp)
	}
	r.route, r.opName, r.Op = rt, rt.Name, rt.Name
	return rt, nil
}

// nextSeq returns an insertion sequence number: the request time in
// nanoseconds, raised above every number this process handed out before,
// so that messages put by one process are ordered even within one clock
// tick (a fake clock never ticks) and messages from several processes
// interleave by time.
func (s *Service) nextSeq(nowNanos int64) uint64 {
	for {
		last := s.lastSeq.Load()
		next := uint64(max(nowNanos, 0))
		if next <= last {
			next = last + 1
		}
		if s.lastSeq.CompareAndSwap(last, next) {
			return next
		}
	}
}

// txTime is the time of one message operation: the injected clock read
// when the operation's transaction first runs, and memoised so that a
// retried Update fn sees the same instant.
//
// Reading the clock in the transaction rather than when the request
// arrived keeps time and commit order consistent: on the embedded backend
// transactions run one after the other, so a Get Messages whose
// transaction runs after a Put Message's also has a later time and sees
// the message, even when the get arrived first. With the arrival time,
// such a get could find a message committed before it still "in the
// future" and answer empty. With a fake clock both times are the same.
type txTime struct {
	clk clock.Clock
	t   int64
	set bool
}

func (s *Service) txTime() *txTime {
	return &txTime{clk: s.clock}
}

// now returns the operation's time in Unix nanoseconds.
func (t *txTime) now() int64 {
	if !t.set {
		t.t, t.set = t.clk.Now().UnixNano(), true
	}
	return t.t
}
