package reclaim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Batch bounds the records one reclaim transaction removes: small
// enough that a transaction takes about a millisecond, so writers queued
// behind it (the embedded store runs transactions one after the other)
// wait no longer than for any request's. A Reclaimer made with the
// default batch adapts it between MinBatch and MaxBatch so that each
// step holds the store for about StepTarget, whatever a record costs on
// this store and machine.
const (
	Batch      = 256
	MinBatch   = 16
	MaxBatch   = 1024
	StepTarget = time.Millisecond
	// SharedStepTarget is StepTarget on a store that runs writes side by
	// side (PostgreSQL): a step holds up nobody there, but each commits
	// (a WAL flush, which other writers' commits queue behind), so fewer,
	// larger steps cost them less; at 1 ms, a step of a 10⁶-blob
	// container's reclaim held 16 records, and the other writer's p99
	// doubled over the 18 minutes the reclaim took.
	SharedStepTarget = 20 * time.Millisecond
	// BusyRest is how many times a step's own time the Reclaimer rests
	// after it while other transactions write (1 when none did): the
	// reclaim then takes at most a quarter of the store's writer, so
	// another client's write waits behind a step rarely and briefly.
	BusyRest = 3
)

// Step removes up to batch records of what the tombstone with key parts
// (after the kind) and value val names, inside tx, at now. It reports
// done when nothing is left; the Reclaimer then deletes the tombstone in
// the same transaction.
type Step func(tx kv.Tx, parts []string, val []byte, now time.Time, batch int) (done bool, err error)

// Sweep is a collector with its own records (the Data Lake namespace's
// detached trees, the Queue service's purged incarnations): one call runs
// one bounded transaction and reports whether it changed something
// (false: nothing is left).
type Sweep func(ctx context.Context) (did bool, err error)

// Key is the tombstone key of kind with parts.
func Key(kind string, parts ...string) []byte {
	return kv.Key(append([]string{"rcl", kind}, parts...)...)
}

// Mark writes the tombstone of kind with parts in tx (the transaction of
// the delete).
func Mark(tx kv.Tx, val []byte, kind string, parts ...string) error {
	if val == nil {
		val = []byte{}
	}
	return tx.Put(Key(kind, parts...), val)
}

// Pending reports whether the tombstone of kind with parts exists: the
// name is still being reclaimed.
func Pending(tx kv.Tx, kind string, parts ...string) (bool, error) {
	_, err := tx.Get(Key(kind, parts...))
	if errors.Is(err, kv.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Inline is the number of bounded transactions a delete runs itself,
// right after its own transaction commits, before it answers: what
// fits in them (a container or table of up to Batch records, a queue or
// share as small) is gone when the delete returns, so its name can be
// used again at once, as clients written against other emulators expect;
// what does not is left to the background, and its name answers 409
// *BeingDeleted until then, as on Azure. Each is one of the background's
// transactions, so a delete never holds the store longer than one step.
const Inline = 1

// Reclaimer runs the Steps of the registered kinds over the tombstones
// of a store, and the Sweeps. The zero value is not usable; call New.
type Reclaimer struct {
	store kv.Store
	clock clock.Clock
	log   *slog.Logger
	batch int
	// adapt: batch moves between MinBatch and MaxBatch after each step
	// to keep the step's own time near target (New with batch <= 0):
	// StepTarget, or SharedStepTarget on a store that is not a single
	// writer.
	adapt  bool
	target time.Duration

	mu     sync.Mutex
	kinds  map[string]Step
	sweeps []Sweep

	wake chan struct{} // cap 1: a tombstone may be waiting

	// beforeStep, when set (tests), runs before each reclaim
	// transaction; an error ends Drain with it.
	beforeStep func(ctx context.Context) error
	// afterDrain, when set, runs after each round of Run with the number
	// of transactions it ran.
	afterDrain func(steps int)
	// onRest, when set (tests), is told each rest after a step and
	// whether others wrote.
	onRest func(d time.Duration, busy bool)
}

// SetAfterDrain makes fn run after each round of Run with the number of
// reclaim transactions the round ran (the process gives memory back to
// the system after a large reclaim). Call it before Run starts.
func (r *Reclaimer) SetAfterDrain(fn func(steps int)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.afterDrain = fn
}

// SetBeforeStep makes fn run before each reclaim transaction, for tests
// that observe a reclaim in progress (fn blocks until they are done) or
// stop it midway (fn returns an error). Call it before Run starts.
func (r *Reclaimer) SetBeforeStep(fn func(ctx context.Context) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.beforeStep = fn
}

// New returns a Reclaimer over store; batch <= 0 means Batch.
func New(store kv.Store, clk clock.Clock, log *slog.Logger, batch int) *Reclaimer {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.Default()
	}
	adapt := batch <= 0
	if adapt {
		batch = Batch
	}
	target := StepTarget
	if !kv.SingleWriter(store) {
		target = SharedStepTarget
	}
	return &Reclaimer{store: store, clock: clk, log: log, batch: batch, adapt: adapt, target: target, kinds: map[string]Step{}, wake: make(chan struct{}, 1)}
}

// Register adds kind, whose tombstones step reclaims.
func (r *Reclaimer) Register(kind string, step Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kinds[kind] = step
}

// AddSweep adds a collector run after the tombstones on every round.
func (r *Reclaimer) AddSweep(s Sweep) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweeps = append(r.sweeps, s)
}

// InlineAllowed reports whether deletes may run their Inline steps
// themselves: not while a test hook (SetBeforeStep) watches the steps,
// since the hook must see them all.
func (r *Reclaimer) InlineAllowed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.beforeStep == nil
}

// Finish runs up to Inline steps of the tombstone of kind with parts, in
// the deleting request (see Inline), and reports whether the tombstone
// is gone. A tombstone another process or the background loop finished
// meanwhile counts as gone. An error leaves the tombstone for the
// background; the delete itself has succeeded.
func (r *Reclaimer) Finish(ctx context.Context, kind string, parts ...string) (bool, error) {
	if !r.InlineAllowed() {
		return false, nil
	}
	r.mu.Lock()
	step := r.kinds[kind]
	r.mu.Unlock()
	if step == nil {
		return false, fmt.Errorf("reclaim: no kind %q registered", kind)
	}
	key := Key(kind, parts...)
	batch := r.curBatch()
	for i := 0; i < Inline; i++ {
		gone := false
		err := r.store.Update(ctx, func(tx kv.Tx) error {
			gone = false
			val, err := tx.Get(key)
			if errors.Is(err, kv.ErrNotFound) {
				gone = true
				return nil
			}
			if err != nil {
				return err
			}
			done, err := step(tx, parts, append([]byte(nil), val...), r.clock.Now(), batch)
			if err != nil || !done {
				return err
			}
			gone = true
			return tx.Delete(key)
		})
		if err != nil || gone {
			return gone, err
		}
	}
	return false, nil
}

// Kick tells the Reclaimer a tombstone was written (after the delete's
// transaction committed): Run starts a round at once.
func (r *Reclaimer) Kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Drain reclaims every tombstone, one bounded transaction at a time,
// then runs the sweeps, and returns the number of reclaim transactions.
// It stops between two transactions when ctx is done. A tombstone whose
// step fails (a record that does not decode) stays, and the others are
// reclaimed all the same; so do a failing sweep and the others. Drain
// then returns the first error.
func (r *Reclaimer) Drain(ctx context.Context) (int, error) {
	steps := 0
	prefix := kv.Key("rcl")
	start, end := prefix, kv.PrefixEnd(prefix)
	var firstErr error
	// writes is kv.Writes after the last step: more than the next step's
	// own one by then means others wrote during the rest or the step.
	writes := kv.Writes(r.store)
	for {
		if err := ctx.Err(); err != nil {
			return steps, err
		}
		r.mu.Lock()
		before := r.beforeStep
		r.mu.Unlock()
		if before != nil {
			if err := before(ctx); err != nil {
				return steps, err
			}
		}
		now := r.clock.Now()
		began := time.Now()
		batch := r.curBatch()
		var did bool
		var key []byte
		var held time.Duration
		var queued int
		err := r.store.Update(ctx, func(tx kv.Tx) error {
			fnStart := time.Now()
			defer func() { held, queued = time.Since(fnStart), kv.WritesQueued(r.store) }()
			did = false
			var val []byte
			key = nil
			if err := tx.Scan(start, end, 1, false, func(k, v []byte) bool {
				key, val = append([]byte(nil), k...), append([]byte(nil), v...)
				return false
			}); err != nil {
				return err
			}
			if key == nil {
				return nil
			}
			parts, ok := kv.Split(key)
			if !ok || len(parts) < 2 {
				return fmt.Errorf("reclaim: malformed tombstone %q", key)
			}
			r.mu.Lock()
			step := r.kinds[parts[1]]
			r.mu.Unlock()
			if step == nil {
				return fmt.Errorf("reclaim: no kind %q registered for tombstone %q", parts[1], key)
			}
			done, err := step(tx, parts[2:], val, now, batch)
			if err != nil {
				return err
			}
			did = true
			if done {
				return tx.Delete(key)
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil || key == nil {
				return steps, err
			}
			// Leave this tombstone for the next round (and an operator
			// to look at): go on after it.
			r.log.Warn("background reclaim step failed", "tombstone", fmt.Sprintf("%q", key), "err", err)
			if firstErr == nil {
				firstErr = err
			}
			start = append(key, 0)
			continue
		}
		if !did {
			break
		}
		steps++
		r.tune(held, queued > 0)
		// Pace: rest as long as the step took, so that the reclaim
		// takes at most half of the store's writer (the embedded and
		// in-memory stores run transactions one after the other), and
		// BusyRest times as long while others write, so that their
		// writes keep their latency. This is a share of real time, not
		// the service's clock.
		w := kv.Writes(r.store)
		busy := queued > 0 || w-writes > 1
		writes = w
		pause := time.Since(began)
		if busy {
			pause *= BusyRest
		}
		if r.onRest != nil {
			r.onRest(pause, busy)
		}
		if err := rest(ctx, pause); err != nil {
			return steps, err
		}
	}
	r.mu.Lock()
	sweeps := append([]Sweep(nil), r.sweeps...)
	r.mu.Unlock()
	for _, s := range sweeps {
		for {
			began := time.Now()
			did, err := s(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return steps, err
				}
				if firstErr == nil {
					firstErr = err
				}
				break
			}
			if !did {
				break
			}
			steps++
			if err := rest(ctx, time.Since(began)); err != nil {
				return steps, err
			}
		}
	}
	return steps, firstErr
}

// curBatch is the batch of the next step.
func (r *Reclaimer) curBatch() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.batch
}

// tune adapts the batch to the time the last step held the store (its
// function's own time, not the commit's): halved above twice the target,
// doubled below half of it. The target is r.target (StepTarget on a
// single writer, SharedStepTarget otherwise), an eighth of it when other
// writes were queued behind the step as it ended (contended):
// the embedded and in-memory stores run transactions one after the other
// (kv.Queued), so this is how long a writer queued behind a step waits
// for it, and while clients write, steps stay short; the batch grows
// back only while nobody waits.
func (r *Reclaimer) tune(held time.Duration, contended bool) {
	if !r.adapt {
		return
	}
	target := r.target
	if contended {
		target /= 8
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case held > 2*target && r.batch > MinBatch:
		r.batch = max(MinBatch, r.batch/2)
	case held < target/2 && r.batch < MaxBatch && !contended:
		r.batch = min(MaxBatch, r.batch*2)
	}
}

// Run drains at once (tombstones a stopped process left), then whenever
// Kick is called, and every interval, until ctx is done.
func (r *Reclaimer) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		steps, err := r.Drain(ctx)
		if err != nil && ctx.Err() == nil {
			r.log.Warn("background reclaim failed", "err", err)
		}
		r.mu.Lock()
		after := r.afterDrain
		r.mu.Unlock()
		if after != nil && ctx.Err() == nil {
			after(steps)
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-t.C:
		}
	}
}

// rest waits d, or until ctx is done.
func rest(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
