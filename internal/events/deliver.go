package events

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Sender delivers events to one kind of endpoint.
type Sender interface {
	// Validate runs the endpoint's validation handshake (Event Grid's
	// subscription validation for webhooks); nil: the endpoint accepted
	// the subscription. It is called once per subscription and endpoint:
	// the result is stored.
	Validate(ctx context.Context, s *Subscription) error
	// Send delivers evs, one event or (a batched webhook subscription)
	// several in one request, all or none; attempt counts the earlier
	// attempts at them (aeg-delivery-count). An error wrapped in
	// Permanent is not retried.
	Send(ctx context.Context, s *Subscription, evs []Event, attempt int) error
}

// PermanentError is a delivery failure that retrying cannot fix (a
// webhook's 400, 401, 403 or 413, as Event Grid treats them): the event
// is dropped at once.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// StatusError is a delivery answered with an HTTP status other than
// success; the webhook sender returns it (wrapped in PermanentError for
// the codes not retried), and a dead-lettered event records it.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("the webhook answered %d", e.Code) }

// RetrySchedule is Event Grid's retry schedule ("Event Grid message
// delivery and retry"): the wait after the first failure, the second,
// ...; the last repeats.
var RetrySchedule = []time.Duration{
	10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
}

// Config configures a Deliverer.
type Config struct {
	Store  kv.Store
	Clock  clock.Clock
	Logger *slog.Logger
	Subs   []Subscription
	// Senders by endpoint type ("webhook", "storagequeue").
	Senders map[string]Sender
	// DeadLetter writes a dead-lettered event's blob (name in container
	// of account, body JSON); nil: dead-letter destinations are dropped
	// to.
	DeadLetter func(ctx context.Context, account, container, name string, body []byte) error
	// BlobURL is the Blob endpoint URL of an account, for data.url.
	BlobURL func(account string) string
	// DFSURL is the dfs endpoint URL of an account, for the URLs of a
	// hierarchical account's Data Lake events (nil or "": BlobURL's).
	DFSURL func(account string) string
	// Poll is how often an idle subscription reads its log (0: 100 ms).
	Poll time.Duration
	// Retry is the retry schedule (nil: RetrySchedule).
	Retry []time.Duration
	// LeaseTTL is how long a delivery lease lasts unrenewed (0: 30 s); a
	// front end that dies loses its subscriptions to another after it.
	LeaseTTL time.Duration
}

// Deliverer runs the delivery of every subscription. Several processes
// may run one over the same store (front ends on one PostgreSQL
// database): a lease row per subscription lets one of them deliver it
// at a time.
type Deliverer struct {
	cfg   Config
	owner string

	mu    sync.Mutex
	state map[string]*subState
	// wake has a channel per subscription (buffered, one slot) that
	// Notify fills, by account.
	wake map[string][]chan struct{}
}

// subState is what this process knows of a subscription's delivery
// beyond the store.
type subState struct {
	Delivered uint64 `json:"delivered"`
	Dropped   uint64 `json:"dropped"`
	// DeadLettered counts the events given up on and kept in the
	// dead-letter container (Dropped counts them too).
	DeadLettered uint64    `json:"deadLettered"`
	Failures     uint64    `json:"failures"`
	LastError    string    `json:"lastError,omitempty"`
	LastErrorAt  time.Time `json:"lastErrorAt,omitzero"`
	NextAttempt  time.Time `json:"nextAttempt,omitzero"`
	Delivering   bool      `json:"delivering"`
}

// New returns a Deliverer; Run starts it.
func New(cfg Config) *Deliverer {
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if len(cfg.Retry) == 0 {
		cfg.Retry = RetrySchedule
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BlobURL == nil {
		cfg.BlobURL = func(a string) string { return "/" + a }
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	d := &Deliverer{cfg: cfg, owner: hex.EncodeToString(b), state: map[string]*subState{}, wake: map[string][]chan struct{}{}}
	for _, s := range cfg.Subs {
		d.state[s.Name] = &subState{}
		d.wake[s.Account] = append(d.wake[s.Account], make(chan struct{}, 1))
	}
	return d
}

// Notify wakes the idle subscriptions of account at once instead of at
// their next poll: a record was appended to its log in this process
// (blob.Service.SetAppended). It never blocks. The record's transaction
// may not have committed yet; a woken subscription that finds nothing
// looks again after 1, 2, 4, 8 and 16 ms (wakeRetry) before it polls
// again. Writes of other processes on a shared store are seen at the
// poll.
func (d *Deliverer) Notify(account string) {
	for _, c := range d.wake[account] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// wakeRetry are the waits of a woken subscription that found nothing.
var wakeRetry = []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond, 16 * time.Millisecond}

// wakeOf is subscription s's wake channel.
func (d *Deliverer) wakeOf(s *Subscription) <-chan struct{} {
	for i := range d.cfg.Subs {
		if &d.cfg.Subs[i] == s {
			n := 0
			for j := 0; j < i; j++ {
				if d.cfg.Subs[j].Account == s.Account {
					n++
				}
			}
			return d.wake[s.Account][n]
		}
	}
	return nil
}

// Accounts reports the accounts with a subscription: their change log
// must be on.
func Accounts(subs []Subscription) func(string) bool {
	set := map[string]bool{}
	for _, s := range subs {
		set[s.Account] = true
	}
	return func(a string) bool { return set[a] }
}

// Init gives every new subscription its position: the end of its
// account's log now, as an Event Grid subscription delivers the events
// after its creation. Call it before the server takes writes, so that a
// write after the start is never skipped; the positions of known
// subscriptions are left as they are.
func (d *Deliverer) Init(ctx context.Context) error {
	for i := range d.cfg.Subs {
		if _, err := d.position(ctx, &d.cfg.Subs[i]); err != nil {
			return err
		}
	}
	return nil
}

// Run delivers every subscription until ctx ends.
func (d *Deliverer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range d.cfg.Subs {
		s := &d.cfg.Subs[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.run(ctx, s)
		}()
	}
	wg.Wait()
	// Give the leases up, so another front end takes over at once.
	rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range d.cfg.Subs {
		_ = d.release(rctx, &d.cfg.Subs[i])
	}
}

const space = "events"

func posKey(s *Subscription) []byte       { return kv.Key(space, s.Name, "pos") }
func leaseKey(s *Subscription) []byte     { return kv.Key(space, s.Name, "lease") }
func validatedKey(s *Subscription) []byte { return kv.Key(space, s.Name, "validated") }

// errLostLease ends a round of delivery: another process holds the
// subscription now.
var errLostLease = errors.New("events: the delivery lease is held by another process")

// runState is what a subscription's loop keeps between its rounds.
type runState struct {
	// renewed is when this process last took or renewed the lease.
	renewed time.Time
	// validated: the endpoint is known to have passed its handshake (as
	// the store says, or this process ran it), so the store is not asked
	// again each round.
	validated bool
	// durable is the position as this process last read or wrote it
	// (known says it did); cur is how far delivery got (events delivered
	// or passed over), which the durable position follows at most every
	// flushEvery (flush): rounds follow each other quickly under load, as
	// each write wakes the deliverer, and writing the position each round
	// cost a write transaction as often.
	known        bool
	durable, cur uint64
	lastFlush    time.Time
	// streak counts the rounds in a row that delivered something, and
	// lastBatch is the size of the last batch sent: a batching
	// subscription under steady load lingers between rounds (linger).
	streak, lastBatch int
}

// linger is how long a batching subscription (maxEventsPerBatch above
// one) waits before its next round while events keep coming: after a
// round that sent a batch short of its limit and either followed
// another delivering round or sent more than one event. Event Grid's batching is optimistic ("Batched event
// delivery": at low event rates a batch often holds fewer events than
// the maximum); waiting this long under load lets batches fill, so a
// busy subscription sends one request per linger instead of one per
// few writes (each write wakes the deliverer), which cost the server
// and the endpoint a request each. A lone event after an idle round
// goes at once.
const linger = 10 * time.Millisecond

// pending reports whether delivery got past the durable position.
func (st *runState) pending() bool { return st.known && st.cur != st.durable }

// run is one subscription's loop.
func (d *Deliverer) run(ctx context.Context, s *Subscription) {
	failures := 0 // consecutive failures of lease, validation or reads
	var st runState
	wake := d.wakeOf(s)
	retry := len(wakeRetry) // the next wakeRetry step after a wake-up
	defer func() {
		// Stopping: write how far delivery got, so that a stop delivers
		// nothing twice.
		if err := d.flush(ctx, s, &st); err != nil && !errors.Is(err, errLostLease) {
			d.cfg.Logger.Warn("event subscription: writing the position at stop failed", "subscription", s.Name, "err", err)
		}
	}()
	for ctx.Err() == nil {
		err := d.round(ctx, s, &st)
		if err != nil && !errors.Is(err, errIdle) {
			// The lease may be lost (an advance refused): take or
			// check it again before delivering more.
			st.renewed = time.Time{}
		}
		switch {
		case err == nil:
			failures = 0
			retry = len(wakeRetry)
			if limit, _ := s.batchLimits(); limit > 1 && (st.streak > 1 || st.lastBatch > 1) && st.lastBatch < limit {
				sleep(ctx, linger)
			}
			continue
		case errors.Is(err, errIdle) && retry < len(wakeRetry):
			// Woken, nothing visible yet: the append's transaction
			// is committing.
			sleep(ctx, wakeRetry[retry])
			retry++
		case errors.Is(err, errIdle):
			failures = 0
			d.setDelivering(s, true)
			wait := d.cfg.Poll
			if st.pending() {
				// Come back to write the position when it is due.
				wait = max(0, min(wait, flushEvery-time.Since(st.lastFlush)))
			}
			if sleepOrWake(ctx, wait, wake) {
				retry = 0
			}
		case errors.Is(err, errLostLease):
			failures = 0
			st.known = false // the holder delivers from the durable position
			d.setDelivering(s, false)
			sleep(ctx, d.cfg.Poll)
			// Standing by: check the lease again soon, so that a
			// holder that stops (and gives it up) is followed at once.
			sleep(ctx, min(d.cfg.LeaseTTL/3, time.Second))
		default:
			if ctx.Err() != nil {
				return
			}
			wait := d.backoff(failures)
			failures++
			d.note(s, func(st *subState) {
				st.LastError, st.LastErrorAt, st.NextAttempt = err.Error(), d.cfg.Clock.Now(), d.cfg.Clock.Now().Add(wait)
			})
			d.cfg.Logger.Warn("event subscription: delivery round failed", "subscription", s.Name, "err", err, "retry_in", wait.String())
			sleep(ctx, wait)
		}
	}
}

var errIdle = errors.New("events: nothing to deliver")

// flush writes the position delivery got to (st.cur), if it is past the
// durable one; once ctx has ended, within 5 seconds of its own.
func (d *Deliverer) flush(ctx context.Context, s *Subscription, st *runState) error {
	if !st.pending() {
		return nil
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
	}
	if err := d.advance(ctx, s, st.durable, st.cur); err != nil {
		if errors.Is(err, errLostLease) {
			st.known = false
		}
		return err
	}
	st.durable, st.lastFlush = st.cur, time.Now()
	return nil
}

// round takes or renews the lease, validates the endpoint if needed and
// delivers one page of the log.
//
// st.renewed is when this process last took or renewed the lease: an
// idle holder renews it every LeaseTTL/3, not at every poll, so an idle
// subscription writes to the store only that often.
func (d *Deliverer) round(ctx context.Context, s *Subscription, st *runState) error {
	renew := func() error {
		now := d.cfg.Clock.Now()
		if !st.renewed.IsZero() && now.Sub(st.renewed) < d.cfg.LeaseTTL/3 && !now.Before(st.renewed) {
			return nil
		}
		if err := d.acquire(ctx, s); err != nil {
			st.renewed = time.Time{}
			return err
		}
		st.renewed = now
		return nil
	}
	if err := renew(); err != nil {
		return err
	}
	sender := d.cfg.Senders[s.Endpoint.Type]
	if sender == nil {
		return fmt.Errorf("no sender for endpoint type %q", s.Endpoint.Type)
	}
	if !st.validated {
		if err := d.validate(ctx, s, sender); err != nil {
			return err
		}
		st.validated = true
	}
	// The durable position and the records after it, in one read: after
	// where this process's delivery got if the position is still the one
	// it last read or wrote (no other holder moved it), else after the
	// position.
	maxEvents, maxBytes := s.batchLimits()
	var recs []changelog.Record
	found := false
	if err := d.cfg.Store.View(ctx, func(tx kv.Tx) error {
		pos, ok, err := readPosition(tx, s)
		if err != nil || !ok {
			return err
		}
		found = true
		if !st.known || st.durable != pos {
			st.known, st.durable, st.cur = true, pos, pos
		}
		recs, _, err = changelog.After(tx, s.Account, st.cur, max(pageSize, maxEvents))
		return err
	}); err != nil {
		return err
	}
	if !found {
		// A subscription Init has not seen: it starts at the log's end.
		pos, err := d.position(ctx, s)
		if err != nil {
			return err
		}
		st.known, st.durable, st.cur = true, pos, pos
		return nil
	}
	if len(recs) == 0 {
		st.streak = 0
		if time.Since(st.lastFlush) >= flushEvery {
			if err := d.flush(ctx, s, st); err != nil {
				return err
			}
		}
		return errIdle
	}
	d.setDelivering(s, true)
	st.streak++
	// st.cur is how far this round got (delivered or passed over); the
	// durable position follows it in batches (flush): at most every
	// flushEvery, before a retry waits, when the subscription goes idle
	// or the process stops. A crash between a delivery and its flush
	// delivers those events again (at least once).
	flush := func() error { return d.flush(ctx, s, st) }
	// A one-event webhook subscription that is behind sends over lanes.
	if maxEvents == 1 && s.Endpoint.Type == destWebhook && len(recs) >= laneMin {
		if err := renew(); err != nil {
			return errors.Join(err, flush())
		}
		return d.roundLanes(ctx, s, st, sender, recs, flush)
	}
	// batch are the events formatted and not yet sent, size their bytes
	// as a JSON array; upTo is the last record read, which st.cur
	// reaches once the batch is delivered (or dropped). An event goes
	// into the batch unless it would take it past maxEvents or, the
	// batch holding something, past maxBytes ("Batched event delivery":
	// the preferred size is honoured on a best-effort basis, and an
	// event larger than it is sent alone).
	var batch []Event
	size, upTo := 1, st.cur
	send := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := d.deliver(ctx, s, sender, batch, flush)
		st.lastBatch = len(batch)
		batch, size = nil, 1
		if err != nil {
			return err
		}
		st.cur = upTo
		return nil
	}
	urls := d.urls(s.Account)
	for _, r := range recs {
		if err := renew(); err != nil {
			return errors.Join(err, flush())
		}
		if ev, ok := s.Format(r, urls); ok {
			if len(batch) > 0 && (len(batch) >= maxEvents || size+1+len(ev.JSON) > maxBytes) {
				if err := send(); err != nil {
					return errors.Join(err, flush())
				}
			}
			batch = append(batch, ev)
			size += 1 + len(ev.JSON)
		}
		upTo = r.Seq
		if len(batch) == 0 {
			st.cur = r.Seq
		}
		if len(batch) >= maxEvents || size >= maxBytes {
			if err := send(); err != nil {
				return errors.Join(err, flush())
			}
		}
		if time.Since(st.lastFlush) >= flushEvery {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := send(); err != nil {
		return errors.Join(err, flush())
	}
	return nil
}

// Lanes: a webhook subscription that sends one event a request (Event
// Grid's default) and is laneMin records or more behind delivers the
// round's events over Lanes requests in flight at once, each blob's
// events in one lane (by subject), in commit order there. One request
// at a time delivers no more than one event per round trip (about 800
// a second on the two-core machine of docs/events.md, fewer than a busy
// account writes), so a steady writer left its subscription further
// behind each second. Event Grid itself promises no order ("Event Grid
// message delivery and retry": events may arrive out of order); this
// server keeps commit order for each blob always, and across blobs
// while the subscription is less than laneMin records behind.
const (
	// Lanes is how many requests a subscription that is behind has in
	// flight.
	Lanes = 8
	// laneMin is how far behind, in records, it starts to use them.
	laneMin = 64
)

// laneOf is the lane of a subject's events.
func laneOf(subject string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(subject))
	return int(h.Sum32() % Lanes)
}

// roundLanes delivers recs' events over Lanes concurrent requests, each
// subject's in one lane in log order, and moves st.cur past recs when
// all arrived (or were dropped); if a lane ends early (the lease lost,
// the process stopping), to just before the first event not delivered,
// so what follows is delivered again (at least once).
func (d *Deliverer) roundLanes(ctx context.Context, s *Subscription, st *runState, sender Sender, recs []changelog.Record, flush func() error) error {
	var byLane [Lanes][]Event
	urls := d.urls(s.Account)
	for _, r := range recs {
		ev, ok := s.Format(r, urls)
		if !ok {
			continue
		}
		i := laneOf(r.Subject)
		byLane[i] = append(byLane[i], ev)
	}
	// The position is written by one lane at a time (before a retry's
	// wait: a lane's retries do not hold the others' events back, and
	// the position does not move past this round's first record until
	// the round ends).
	var mu sync.Mutex
	lockedFlush := func() error {
		mu.Lock()
		defer mu.Unlock()
		return flush()
	}
	var wg sync.WaitGroup
	var errs [Lanes]error
	var stopped [Lanes]uint64 // the seq of the first event a lane did not deliver
	for i := range byLane {
		if len(byLane[i]) == 0 {
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for _, ev := range byLane[i] {
				if err := d.deliver(ctx, s, sender, []Event{ev}, lockedFlush); err != nil {
					errs[i], stopped[i] = err, ev.Seq
					return
				}
			}
		}(i)
	}
	wg.Wait()
	st.lastBatch = 1
	cur := recs[len(recs)-1].Seq
	var failed error
	for i, err := range errs {
		if err != nil {
			failed = errors.Join(failed, err)
			cur = min(cur, stopped[i]-1)
		}
	}
	st.cur = max(st.cur, cur)
	if failed != nil {
		return errors.Join(failed, flush())
	}
	if time.Since(st.lastFlush) >= flushEvery {
		return flush()
	}
	return nil
}

// pageSize is how many log records a round reads (more when a batch may
// hold more events).
const pageSize = 100

// urls are account's endpoint URLs.
func (d *Deliverer) urls(account string) URLs {
	u := URLs{Blob: d.cfg.BlobURL(account)}
	if d.cfg.DFSURL != nil {
		u.DFS = d.cfg.DFSURL(account)
	}
	return u
}

// flushEvery is how often, at most, a subscription's position is
// written while it is busy, and so bounds how long a delivered event's
// position stays unwritten (the events a crash may deliver again).
const flushEvery = 50 * time.Millisecond

// deliver sends evs (one request: a single event, or a batch) until
// they are delivered or dropped (a permanent error, the attempts or the
// oldest event's time to live used up), following the retry schedule
// and keeping the lease. A batch is retried, and given up on, as a
// whole ("Batched event delivery": all or none); each of its events is
// dead-lettered. It returns an error only when ctx ends or the lease is
// lost: the events are then delivered again by whoever holds the lease
// next.
//
// beforeWait runs before each wait between attempts: the position of
// the events delivered before evs is written then, not after the
// retries.
func (d *Deliverer) deliver(ctx context.Context, s *Subscription, sender Sender, evs []Event, beforeWait func() error) error {
	ttl := time.Duration(s.RetryPolicy.EventTimeToLiveInMinutes) * time.Minute
	first := evs[0]
	what := fmt.Sprintf("event %s (seq %d)", first.ID, first.Seq)
	if len(evs) > 1 {
		what = fmt.Sprintf("batch of %d events from %s (seq %d)", len(evs), first.ID, first.Seq)
	}
	for attempt := 0; ; attempt++ {
		err := sender.Send(ctx, s, evs, attempt)
		if err == nil {
			d.note(s, func(st *subState) { st.Delivered += uint64(len(evs)); st.NextAttempt = time.Time{} })
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		now := d.cfg.Clock.Now()
		wait := d.backoff(attempt)
		var perm *PermanentError
		drop := ""
		switch {
		case errors.As(err, &perm):
			drop = "UndeliverableDueToHttp" + outcome(err)
		case attempt+1 >= s.RetryPolicy.MaxDeliveryAttempts:
			drop = "MaxDeliveryAttemptsExceeded"
		case now.Add(wait).Sub(first.Time) > ttl:
			drop = "TimeToLiveExceeded"
		}
		dead := 0
		if drop != "" && s.DeadLetter != nil && d.cfg.DeadLetter != nil {
			for _, ev := range evs {
				if derr := d.deadLetter(ctx, s, ev, drop, attempt+1, err, now); derr != nil {
					d.cfg.Logger.Warn("event subscription: dead-lettering failed, the event is dropped", "subscription", s.Name, "event", ev.ID, "err", derr)
				} else {
					dead++
				}
			}
		}
		d.note(s, func(st *subState) {
			st.Failures++
			st.LastError, st.LastErrorAt = fmt.Sprintf("%s: %v", what, err), now
			st.NextAttempt = now.Add(wait)
			if drop != "" {
				st.Dropped += uint64(len(evs))
				st.NextAttempt = time.Time{}
			}
			st.DeadLettered += uint64(dead)
		})
		if drop != "" {
			d.cfg.Logger.Warn("event subscription: events given up on", "subscription", s.Name, "events", what, "reason", drop, "dead_lettered", dead, "err", err)
			return nil
		}
		d.cfg.Logger.Info("event subscription: delivery failed, retrying", "subscription", s.Name, "events", what, "attempt", attempt+1, "retry_in", wait.String(), "err", err)
		if err := beforeWait(); err != nil {
			return err
		}
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
		if err := d.acquire(ctx, s); err != nil {
			return err
		}
	}
}

// outcome names a failed attempt as Event Grid's lastDeliveryOutcome
// does: BadRequest for a 400, TimedOut for 408 or no answer in time,
// the status's name for the other codes, GenericError for the rest.
func outcome(err error) string {
	var se *StatusError
	if !errors.As(err, &se) {
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Timeout") {
			return "TimedOut"
		}
		return "GenericError"
	}
	switch se.Code {
	case 400:
		return "BadRequest"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "NotFound"
	case 408:
		return "TimedOut"
	case 413:
		return "RequestEntityTooLarge"
	case 503:
		return "ServiceUnavailable"
	}
	return "GenericError"
}

// deadLetter writes ev, given up on for reason after attempts attempts
// (the last failing with lastErr at at), to the subscription's
// dead-letter container, as Event Grid does: a blob
// <ACCOUNT>/<SUBSCRIPTION>/yyyy/MM/dd/HH/<event id>.json holding an
// array of the event with deadLetterReason, deliveryAttempts,
// lastDeliveryOutcome, lastHttpStatusCode, publishTime and
// lastDeliveryAttemptTime added.
func (d *Deliverer) deadLetter(ctx context.Context, s *Subscription, ev Event, reason string, attempts int, lastErr error, at time.Time) error {
	var m map[string]any
	if err := json.Unmarshal(ev.JSON, &m); err != nil {
		return err
	}
	m["deadLetterReason"] = reason
	m["deliveryAttempts"] = attempts
	m["lastDeliveryOutcome"] = outcome(lastErr)
	code := 0
	var se *StatusError
	if errors.As(lastErr, &se) {
		code = se.Code
	}
	m["lastHttpStatusCode"] = code
	m["publishTime"] = ev.Time.UTC().Format(time.RFC3339Nano)
	m["lastDeliveryAttemptTime"] = at.UTC().Format(time.RFC3339Nano)
	body, err := json.Marshal([]any{m})
	if err != nil {
		return err
	}
	name := strings.ToUpper(s.Account) + "/" + strings.ToUpper(s.Name) + "/" + at.UTC().Format("2006/01/02/15") + "/" + ev.ID + ".json"
	return d.cfg.DeadLetter(ctx, s.Account, s.DeadLetter.Container, name, body)
}

// backoff is the wait after failure n (from 0).
func (d *Deliverer) backoff(n int) time.Duration {
	if n >= len(d.cfg.Retry) {
		n = len(d.cfg.Retry) - 1
	}
	return d.cfg.Retry[n]
}

// validate runs the endpoint's handshake unless this subscription's
// endpoint passed it before.
func (d *Deliverer) validate(ctx context.Context, s *Subscription, sender Sender) error {
	want := s.Endpoint.Type + " " + s.Endpoint.URL + s.Endpoint.Queue + " " + s.Schema
	var got []byte
	err := d.cfg.Store.View(ctx, func(tx kv.Tx) (err error) {
		got, err = tx.Get(validatedKey(s))
		if errors.Is(err, kv.ErrNotFound) {
			got, err = nil, nil
		}
		return err
	})
	if err != nil || string(got) == want {
		return err
	}
	if err := sender.Validate(ctx, s); err != nil {
		return fmt.Errorf("validating the endpoint: %w", err)
	}
	return d.cfg.Store.Update(ctx, func(tx kv.Tx) error { return tx.Put(validatedKey(s), []byte(want)) })
}

// position is the subscription's durable position: the sequence number
// of the last record it has delivered or passed over. A new subscription
// starts at the end of the log, as an Event Grid subscription delivers
// only the events after its creation.
func (d *Deliverer) position(ctx context.Context, s *Subscription) (uint64, error) {
	var pos uint64
	found := false
	err := d.cfg.Store.View(ctx, func(tx kv.Tx) (err error) {
		pos, found, err = readPosition(tx, s)
		return err
	})
	if err != nil || found {
		return pos, err
	}
	err = d.cfg.Store.Update(ctx, func(tx kv.Tx) error {
		v, err := tx.Get(posKey(s))
		if err == nil {
			pos, err = strconv.ParseUint(string(v), 10, 64)
			return err
		}
		if !errors.Is(err, kv.ErrNotFound) {
			return err
		}
		if pos, err = changelog.LastSeq(tx, s.Account); err != nil {
			return err
		}
		return tx.Put(posKey(s), []byte(strconv.FormatUint(pos, 10)))
	})
	return pos, err
}

// readPosition reads the subscription's durable position, and whether it
// has one.
func readPosition(tx kv.Tx, s *Subscription) (uint64, bool, error) {
	v, err := tx.Get(posKey(s))
	if errors.Is(err, kv.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	pos, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("events: position of %q is %q", s.Name, v)
	}
	return pos, true, nil
}

// advance moves the position from old to seq, in one transaction that
// checks this process still holds the lease and the position is still
// old: a process that lost the subscription cannot move it.
func (d *Deliverer) advance(ctx context.Context, s *Subscription, old, seq uint64) error {
	return d.cfg.Store.Update(ctx, func(tx kv.Tx) error {
		owner, _, err := readLease(tx, s)
		if err != nil {
			return err
		}
		if owner != d.owner {
			return errLostLease
		}
		v, err := tx.Get(posKey(s))
		if err != nil || string(v) != strconv.FormatUint(old, 10) {
			return errLostLease
		}
		return tx.Put(posKey(s), []byte(strconv.FormatUint(seq, 10)))
	})
}

// acquire takes the subscription's lease, or renews it, unless another
// process holds it unexpired (errLostLease).
func (d *Deliverer) acquire(ctx context.Context, s *Subscription) error {
	return d.cfg.Store.Update(ctx, func(tx kv.Tx) error {
		owner, until, err := readLease(tx, s)
		if err != nil {
			return err
		}
		now := d.cfg.Clock.Now()
		if owner != "" && owner != d.owner && now.Before(until) {
			return errLostLease
		}
		return tx.Put(leaseKey(s), []byte(d.owner+" "+strconv.FormatInt(now.Add(d.cfg.LeaseTTL).UnixNano(), 10)))
	})
}

// release gives the lease up if this process holds it.
func (d *Deliverer) release(ctx context.Context, s *Subscription) error {
	return d.cfg.Store.Update(ctx, func(tx kv.Tx) error {
		owner, _, err := readLease(tx, s)
		if err != nil || owner != d.owner {
			return err
		}
		return tx.Delete(leaseKey(s))
	})
}

func readLease(tx kv.Tx, s *Subscription) (string, time.Time, error) {
	v, err := tx.Get(leaseKey(s))
	if errors.Is(err, kv.ErrNotFound) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, err
	}
	owner, until, ok := strings.Cut(string(v), " ")
	n, perr := strconv.ParseInt(until, 10, 64)
	if !ok || perr != nil {
		return "", time.Time{}, fmt.Errorf("events: lease of %q is %q", s.Name, v)
	}
	return owner, time.Unix(0, n).UTC(), nil
}

func (d *Deliverer) note(s *Subscription, f func(*subState)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(d.state[s.Name])
}

func (d *Deliverer) setDelivering(s *Subscription, on bool) {
	d.note(s, func(st *subState) { st.Delivering = on })
}

// sleepOrWake waits d, or until ctx ends or wake is signalled, and
// reports whether it was woken.
func sleepOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	_, woken := wait(ctx, d, wake)
	return woken
}

// sleep waits d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	passed, _ := wait(ctx, d, nil)
	return passed
}

// wait waits d, or until ctx ends or wake (nil: never) is signalled, and
// reports which of the two ended it, if either.
func wait(ctx context.Context, d time.Duration, wake <-chan struct{}) (passed, woken bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, false
	case <-t.C:
		return true, false
	case <-wake:
		return false, true
	}
}

// Status is a subscription and the state of its delivery.
type Status struct {
	Subscription
	// Position is the durable position: the last log record delivered
	// or passed over.
	Position uint64 `json:"position"`
	// LogLast is the account's last log record; LogLast-Position
	// records wait.
	LogLast uint64 `json:"logLast"`
	// Validated: the endpoint passed its validation handshake.
	Validated bool `json:"validated"`
	// LeaseHolder is the process delivering the subscription ("" none),
	// Mine whether it is this one.
	LeaseHolder  string    `json:"leaseHolder,omitempty"`
	LeaseExpires time.Time `json:"leaseExpires,omitzero"`
	Mine         bool      `json:"mine"`
	// This process's counters.
	Process subState `json:"process"`
}

// Status reports every subscription, as the admin endpoint shows them.
func (d *Deliverer) Status(ctx context.Context) ([]Status, error) {
	out := make([]Status, len(d.cfg.Subs))
	err := d.cfg.Store.View(ctx, func(tx kv.Tx) error {
		for i := range d.cfg.Subs {
			s := &d.cfg.Subs[i]
			st := Status{Subscription: *s}
			if v, err := tx.Get(posKey(s)); err == nil {
				st.Position, _ = strconv.ParseUint(string(v), 10, 64)
			} else if !errors.Is(err, kv.ErrNotFound) {
				return err
			}
			var err error
			if st.LogLast, err = changelog.LastSeq(tx, s.Account); err != nil {
				return err
			}
			if _, err := tx.Get(validatedKey(s)); err == nil {
				st.Validated = true
			}
			if st.LeaseHolder, st.LeaseExpires, err = readLease(tx, s); err != nil {
				return err
			}
			st.Mine = st.LeaseHolder == d.owner && st.LeaseHolder != ""
			out[i] = st
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range out {
		out[i].Process = *d.state[out[i].Name]
	}
	return out, nil
}

// QueueSender delivers to storage queues of the served accounts: each
// event, a single JSON object in the subscription's schema, is one
// message, base64-encoded as Event Grid writes them.
type QueueSender struct {
	// Put adds a message with text to queue in account.
	Put func(ctx context.Context, account, queue, text string) error
}

// Validate accepts: a storage queue has no handshake.
func (QueueSender) Validate(context.Context, *Subscription) error { return nil }

// Send puts each of evs into the subscription's queue (a storage queue
// subscription is not batched: one event at a time).
func (q QueueSender) Send(ctx context.Context, s *Subscription, evs []Event, _ int) error {
	for _, ev := range evs {
		if err := q.Put(ctx, s.Account, s.Endpoint.Queue, base64.StdEncoding.EncodeToString(ev.JSON)); err != nil {
			return err
		}
	}
	return nil
}
