package queue

import (
	"log/slog"
	"math/rand/v2"
	"sync/atomic"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
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
	// props are the Queue Service Properties and Stats.
	props *svcprops.Service
}

// New returns the Queue service over store.
func New(store kv.Store, clk clock.Clock, log *slog.Logger) *Service {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.Default()
	}
	return &Service{store: store, clock: clk, log: log, shardOffset: rand.IntN(numShards),
		props: svcprops.New(svcprops.Queue, store, servicePropsKey)}
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

// ServiceProperties returns the Queue Service Properties and Stats (Get/Set
// Queue Service Properties, Get Queue Service Stats, the CORS rules): the
// implementation every service shares, of kind svcprops.Queue.
func (s *Service) ServiceProperties() *svcprops.Service { return s.props }
