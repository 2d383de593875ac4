package bolt_test

// Crash tests: a child process (this test binary re-executed) hammers the
// store with durable Update transactions and reports every acknowledged one
// on stdout; the parent SIGKILLs it at a random moment, reopens the store and
// checks that every acknowledged transaction survived, that every
// transaction is all-or-nothing and that the writes of failed transactions
// never appear.
//
// The workload is deterministic, so the exact expected contents of the
// store follow from each writer's "cur" key alone. Writer w's transaction i
// (i = 1, 2, ... in order, the next one starting only after the previous
// one returned):
//
//	total          += 1 (read-modify-write, shared by all writers)
//	w/<w>/cur       = i
//	w/<w>/hist/<i>  = histValue(w, i) (0 bytes, ~1 KiB or ~200 KiB)
//	delete w/<w>/hist/<i-5>
//
// and, when failing(w, i), it also writes w/<w>/fail/<i> and returns
// errInjected, so none of that may ever be visible.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
)

const (
	crashEnvDir  = "CERULEAN_CRASH_CHILD"      // the child's data directory
	crashEnvMode = "CERULEAN_CRASH_MODE"       // "kill" or "close"
	crashEnvRun  = "CERULEAN_CRASH_RUN_MILLIS" // close mode: how long to write

	crashWriters = 16
	crashDelSkew = 5 // transaction i deletes hist/<i-crashDelSkew>
)

var (
	crashTotalKey = []byte("total")
	errInjected   = errors.New("crash test: injected failure")
)

func crashCurKey(w int) []byte          { return fmt.Appendf(nil, "w/%02d/cur", w) }
func crashHistKey(w, i int) []byte      { return fmt.Appendf(nil, "w/%02d/hist/%08d", w, i) }
func crashFailKey(w, i int) []byte      { return fmt.Appendf(nil, "w/%02d/fail/%08d", w, i) }
func crashWriterPrefix(w int) []byte    { return fmt.Appendf(nil, "w/%02d/", w) }
func crashWriterPrefixEnd(w int) []byte { return fmt.Appendf(nil, "w/%02d0", w) } // '0' == '/'+1

// failing reports whether writer w's transaction i returns an error after
// writing (about one in eleven).
func failing(w, i int) bool { return (i*5+w)%11 == 4 }

// histSize is the size of hist/<i>'s value: empty, about 1 KiB or, rarely,
// about 200 KiB.
func histSize(w, i int) int {
	switch {
	case (i+w)%37 == 0:
		return 200<<10 + (i*13+w)%1000
	case i%4 == 1:
		return 0
	default:
		return 900 + (i*37+w*11)%250
	}
}

func histValue(w, i int) []byte {
	b := make([]byte, histSize(w, i))
	for k := range b {
		b[k] = byte(w*131 + i*17 + k*7 + k>>8)
	}
	return b
}

// nextCommitted returns the first non-failing transaction number after i.
func nextCommitted(w, i int) int {
	for i++; failing(w, i); i++ {
	}
	return i
}

// committedCount is how many of writer w's transactions 1..cur committed.
func committedCount(w, cur int) int {
	n := 0
	for i := 1; i <= cur; i++ {
		if !failing(w, i) {
			n++
		}
	}
	return n
}

// expectedHist lists, ascending, the hist/<i> present when writer w's last
// committed transaction is cur: committed, and not deleted by a committed
// later transaction.
func expectedHist(w, cur int) []int {
	var out []int
	for i := 1; i <= cur; i++ {
		if failing(w, i) {
			continue
		}
		if d := i + crashDelSkew; d <= cur && !failing(w, d) {
			continue // deleted by transaction d
		}
		out = append(out, i)
	}
	return out
}

// crashTxn is writer w's transaction i; prev is the writer's last committed
// transaction, which the fn checks it sees.
func crashTxn(w, i, prev int) func(kv.Tx) error {
	return func(tx kv.Tx) error {
		if got, err := getInt(tx, crashCurKey(w)); err != nil {
			return err
		} else if got != prev {
			return fmt.Errorf("writer %d txn %d: cur = %d inside the transaction, want %d", w, i, got, prev)
		}
		total, err := getInt(tx, crashTotalKey)
		if err != nil {
			return err
		}
		if err := tx.Put(crashTotalKey, strconv.AppendInt(nil, int64(total+1), 10)); err != nil {
			return err
		}
		if err := tx.Put(crashHistKey(w, i), histValue(w, i)); err != nil {
			return err
		}
		if err := tx.Put(crashCurKey(w), strconv.AppendInt(nil, int64(i), 10)); err != nil {
			return err
		}
		if i > crashDelSkew {
			if err := tx.Delete(crashHistKey(w, i-crashDelSkew)); err != nil {
				return err
			}
		}
		if failing(w, i) {
			if err := tx.Put(crashFailKey(w, i), []byte("must never be visible")); err != nil {
				return err
			}
			return errInjected
		}
		return nil
	}
}

// getInt reads a decimal value; a missing key reads as 0.
func getInt(tx kv.Tx, key []byte) (int, error) {
	v, err := tx.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get %q: %w", key, err)
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("key %q: bad value %q", key, v)
	}
	return n, nil
}

type crashKV struct{ k, v []byte }

// verifyCrashStore checks, in one View, that the store holds exactly what
// the workload implies for each writer's cur, and that forward, reverse,
// limited and ranged scans and point Gets agree. It returns each writer's
// cur.
func verifyCrashStore(ctx context.Context, db kv.Store) (cur [crashWriters]int, err error) {
	err = db.View(ctx, func(tx kv.Tx) error {
		// Whole key space, forward.
		var fwd []crashKV
		if err := tx.Scan(nil, nil, 0, false, func(k, v []byte) bool {
			fwd = append(fwd, crashKV{bytes.Clone(k), bytes.Clone(v)})
			return true
		}); err != nil {
			return fmt.Errorf("forward scan: %w", err)
		}
		for i := 1; i < len(fwd); i++ {
			if bytes.Compare(fwd[i-1].k, fwd[i].k) >= 0 {
				return fmt.Errorf("forward scan out of order: %q then %q", fwd[i-1].k, fwd[i].k)
			}
		}
		// Reverse: the same pairs, backwards.
		n := 0
		var rerr error
		if err := tx.Scan(nil, nil, 0, true, func(k, v []byte) bool {
			j := len(fwd) - 1 - n
			n++
			if j < 0 {
				rerr = fmt.Errorf("reverse scan visits extra key %q", k)
				return false
			}
			if !bytes.Equal(k, fwd[j].k) || !bytes.Equal(v, fwd[j].v) {
				rerr = fmt.Errorf("reverse scan step %d: key %q (%d bytes), forward has %q (%d bytes)", n, k, len(v), fwd[j].k, len(fwd[j].v))
				return false
			}
			return true
		}); err != nil {
			return fmt.Errorf("reverse scan: %w", err)
		}
		if rerr != nil {
			return rerr
		}
		if n != len(fwd) {
			return fmt.Errorf("reverse scan visits %d keys, forward %d", n, len(fwd))
		}
		// Limited scans stop early and agree with the full one.
		for _, rev := range []bool{false, true} {
			var got [][]byte
			if err := tx.Scan(nil, nil, 3, rev, func(k, _ []byte) bool {
				got = append(got, bytes.Clone(k))
				return true
			}); err != nil {
				return fmt.Errorf("limited scan: %w", err)
			}
			if want := min(3, len(fwd)); len(got) != want {
				return fmt.Errorf("scan with limit 3 (reverse %v) visits %d keys, want %d", rev, len(got), want)
			}
			for i, k := range got {
				j := i
				if rev {
					j = len(fwd) - 1 - i
				}
				if !bytes.Equal(k, fwd[j].k) {
					return fmt.Errorf("scan with limit 3 (reverse %v) key %d = %q, want %q", rev, i, k, fwd[j].k)
				}
			}
		}
		// Point Gets agree with the scan.
		for _, e := range fwd {
			v, err := tx.Get(e.k)
			if err != nil {
				return fmt.Errorf("get %q (seen by scan): %w", e.k, err)
			}
			if !bytes.Equal(v, e.v) {
				return fmt.Errorf("get %q: %d bytes, scan saw %d", e.k, len(v), len(e.v))
			}
		}

		// Classify every key; anything unexpected (e.g. a fail key) is an error.
		all := make(map[string][]byte, len(fwd))
		hist := make([][]int, crashWriters)
		for _, e := range fwd {
			all[string(e.k)] = e.v
			ks := string(e.k)
			if ks == string(crashTotalKey) {
				continue
			}
			var w, i int
			var rest string
			if _, err := fmt.Sscanf(ks, "w/%02d/%s", &w, &rest); err != nil || w < 0 || w >= crashWriters || ks[:5] != string(crashWriterPrefix(w)) {
				return fmt.Errorf("unexpected key %q", ks)
			}
			switch {
			case rest == "cur":
				c, err := strconv.Atoi(string(e.v))
				if err != nil || c <= 0 {
					return fmt.Errorf("key %q: bad value %q", ks, e.v)
				}
				cur[w] = c
			case strings.HasPrefix(rest, "hist/"):
				if _, err := fmt.Sscanf(rest, "hist/%08d", &i); err != nil || ks != string(crashHistKey(w, i)) {
					return fmt.Errorf("unexpected key %q", ks)
				}
				hist[w] = append(hist[w], i)
			default:
				return fmt.Errorf("unexpected key %q (%d bytes): a failed transaction's write?", ks, len(e.v))
			}
		}

		sum := 0
		for w := range crashWriters {
			c := cur[w]
			if c > 0 && failing(w, c) {
				return fmt.Errorf("writer %d: cur = %d, a transaction that failed", w, c)
			}
			want := expectedHist(w, c)
			if missing, extra := diffInts(want, hist[w]); len(missing)+len(extra) > 0 {
				return fmt.Errorf("writer %d (cur %d): hist keys missing %v, unexpected %v", w, c, missing, extra)
			}
			for _, i := range want {
				if v := all[string(crashHistKey(w, i))]; !bytes.Equal(v, histValue(w, i)) {
					return fmt.Errorf("writer %d: hist/%d has %d bytes, not the %d written", w, i, len(v), histSize(w, i))
				}
			}
			// Keys absent from the scan are absent for Get too.
			for i := max(1, c-2*crashDelSkew); i <= c+2; i++ {
				for _, k := range [][]byte{crashHistKey(w, i), crashFailKey(w, i)} {
					if _, ok := all[string(k)]; ok {
						continue
					}
					if v, err := tx.Get(k); !errors.Is(err, kv.ErrNotFound) {
						return fmt.Errorf("get %q (not seen by scan) = %d bytes, %v; want ErrNotFound", k, len(v), err)
					}
				}
			}
			// A ranged scan over the writer's keys sees exactly its keys.
			var got []string
			if err := tx.Scan(crashWriterPrefix(w), crashWriterPrefixEnd(w), 0, w%2 == 1, func(k, _ []byte) bool {
				got = append(got, string(k))
				return true
			}); err != nil {
				return fmt.Errorf("ranged scan: %w", err)
			}
			wantKeys := 0
			if c > 0 {
				wantKeys = 1 + len(want)
			}
			if len(got) != wantKeys {
				return fmt.Errorf("ranged scan over writer %d's keys visits %d keys (%q), want %d", w, len(got), got, wantKeys)
			}
			for _, k := range got {
				if !strings.HasPrefix(k, string(crashWriterPrefix(w))) {
					return fmt.Errorf("ranged scan over writer %d's keys visits %q", w, k)
				}
			}
			sum += committedCount(w, c)
		}
		total := 0
		if v, ok := all[string(crashTotalKey)]; ok {
			t, err := strconv.Atoi(string(v))
			if err != nil || t <= 0 {
				return fmt.Errorf("total: bad value %q", v)
			}
			total = t
		}
		if total != sum {
			return fmt.Errorf("total = %d, but the writers' cur keys account for %d committed transactions (cur %v)", total, sum, cur)
		}
		return nil
	})
	return cur, err
}

// diffInts returns the elements of the ascending lists want and got found
// in only one of them.
func diffInts(want, got []int) (missing, extra []int) {
	for len(want)+len(got) > 0 {
		switch {
		case len(got) == 0 || (len(want) > 0 && want[0] < got[0]):
			missing, want = append(missing, want[0]), want[1:]
		case len(want) == 0 || got[0] < want[0]:
			extra, got = append(extra, got[0]), got[1:]
		default:
			want, got = want[1:], got[1:]
		}
	}
	return missing, extra
}

// checkAcks checks one round's acknowledgements against the state found
// afterwards. start is each writer's cur when the round began, acks the
// transactions acknowledged, in order, and cur the recovered state. When
// clean (the child closed the store), nothing may be in flight.
func checkAcks(start [crashWriters]int, acks [crashWriters][]int, cur [crashWriters]int, clean bool) error {
	var errs []error
	for w := range crashWriters {
		last := start[w]
		for _, i := range acks[w] {
			if i != nextCommitted(w, last) {
				errs = append(errs, fmt.Errorf("writer %d: ack %d after %d, want %d", w, i, last, nextCommitted(w, last)))
			}
			last = i
		}
		switch {
		case cur[w] < last:
			errs = append(errs, fmt.Errorf("writer %d: acknowledged transaction %d lost: store has cur = %d", w, last, cur[w]))
		case cur[w] == last:
		case clean:
			errs = append(errs, fmt.Errorf("writer %d: cur = %d after a clean close, but the last acknowledged transaction is %d", w, cur[w], last))
		case cur[w] != nextCommitted(w, last):
			// Only the one transaction in flight at the kill may have
			// committed without its ack.
			errs = append(errs, fmt.Errorf("writer %d: cur = %d, but the last acknowledged transaction is %d and only %d can have been in flight", w, cur[w], last, nextCommitted(w, last)))
		}
	}
	return errors.Join(errs...)
}

// TestCrashChild is the child process of TestCrash; it does nothing unless
// started by it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnvDir)
	if dir == "" {
		t.Skip("child process of TestCrash")
	}
	clean := os.Getenv(crashEnvMode) == "close"
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		// One write per line: a kill leaves at most a partial last line.
		if _, err := os.Stdout.Write(fmt.Appendf(nil, format+"\n", args...)); err != nil {
			os.Exit(3)
		}
	}
	fail := func(format string, args ...any) {
		say("fail "+format, args...)
		os.Exit(2)
	}

	ctx := context.Background()
	db, err := bolt.Open(filepath.Join(dir, "meta.db"), bolt.Options{})
	if err != nil {
		fail("open: %v", err)
	}
	start, err := verifyCrashStore(ctx, db)
	if err != nil {
		fail("verify after open: %v", err)
	}
	for w := range crashWriters {
		say("start %d %d", w, start[w])
	}
	say("ready")

	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range crashWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prev := start[w]
			for i := prev + 1; !stop.Load(); i++ {
				err := db.Update(ctx, crashTxn(w, i, prev))
				switch {
				case failing(w, i):
					if !errors.Is(err, errInjected) {
						fail("writer %d txn %d: Update = %v, want errInjected", w, i, err)
					}
				case err != nil:
					fail("writer %d txn %d: Update: %v", w, i, err)
				default:
					say("ack %d %d", w, i)
					prev = i
				}
			}
		}()
	}
	if !clean {
		// The parent kills us long before this.
		time.Sleep(30 * time.Second)
		fail("not killed")
	}
	ms, _ := strconv.Atoi(os.Getenv(crashEnvRun))
	time.Sleep(time.Duration(ms) * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if err := db.Close(); err != nil {
		fail("close: %v", err)
	}
	say("closed")
}

// crashChildOutput is what the parent learned from a child's stdout.
type crashChildOutput struct {
	start    [crashWriters]int
	starts   int
	acks     [crashWriters][]int
	nacks    int
	ready    bool
	closed   bool
	problems []string // protocol violations and "fail" lines
	other    []string // anything else (test framework output)
}

// readCrashChild parses the child's stdout until EOF; ready is closed when
// the child reports it has opened the store. A last line cut short by the
// kill is ignored.
func readCrashChild(r io.Reader, out *crashChildOutput, ready chan<- struct{}) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return // EOF (or a partial line at the kill)
		}
		line = strings.TrimSuffix(line, "\n")
		var w, i int
		switch f := strings.Fields(line); {
		case len(f) == 3 && (f[0] == "ack" || f[0] == "start"):
			var e1, e2 error
			w, e1 = strconv.Atoi(f[1])
			i, e2 = strconv.Atoi(f[2])
			if e1 != nil || e2 != nil || w < 0 || w >= crashWriters || i < 0 {
				out.problems = append(out.problems, "bad line: "+line)
				continue
			}
			if f[0] == "start" {
				out.start[w] = i
				out.starts++
			} else {
				out.acks[w] = append(out.acks[w], i)
				out.nacks++
			}
		case line == "ready":
			if out.starts != crashWriters {
				out.problems = append(out.problems, fmt.Sprintf("ready after %d start lines", out.starts))
			}
			out.ready = true
			close(ready)
		case line == "closed":
			out.closed = true
		case strings.HasPrefix(line, "fail "):
			out.problems = append(out.problems, line)
		default:
			out.other = append(out.other, line)
		}
	}
}

func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary; skipped in -short mode")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.db")
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	t.Logf("seed %d", seed)

	rounds := []struct {
		name string
		kill bool
		// reopen: the parent reopens and verifies the store after the
		// round. Otherwise the next child is the first to open it (it
		// recovers after the crash, verifies, reports its start state and
		// crashes in turn), so recovery of a recovered store is exercised.
		reopen bool
	}{
		{"kill-1", true, true},
		{"kill-2", true, false},
		{"kill-3", true, true},
		{"kill-4", true, true},
		{"kill-5", true, true},
		{"close", false, true},
	}

	var known [crashWriters]int // each writer's cur as last verified
	exact := true               // known is exact, not a lower bound from acks
	totalAcks, killedAcks := 0, 0
	for _, rd := range rounds {
		var out crashChildOutput
		runMillis := 300 + rng.IntN(500)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.timeout=60s")
		mode := "close"
		if rd.kill {
			mode = "kill"
		}
		cmd.Env = append(os.Environ(), crashEnvDir+"="+dir, crashEnvMode+"="+mode, crashEnvRun+"="+strconv.Itoa(runMillis))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan struct{})
		eof := make(chan struct{})
		go func() {
			defer close(eof)
			readCrashChild(stdout, &out, ready)
		}()
		describe := func() string {
			return fmt.Sprintf("child stdout (other lines): %q\nchild stderr: %s", out.other, stderr.Bytes())
		}
		kill := func() {
			_ = cmd.Process.Kill() // SIGKILL
			<-eof
			_ = cmd.Wait()
		}

		select {
		case <-ready:
		case <-eof:
			_ = cmd.Wait()
			t.Fatalf("round %s: child exited before opening the store: %v %q\n%s", rd.name, cmd.ProcessState, out.problems, describe())
		case <-time.After(20 * time.Second):
			kill()
			t.Fatalf("round %s: child did not open the store in time\n%s", rd.name, describe())
		}

		var delay time.Duration
		if rd.kill {
			delay = time.Duration(200+rng.IntN(1300)) * time.Millisecond
			select {
			case <-time.After(delay):
			case <-eof:
				_ = cmd.Wait()
				t.Fatalf("round %s: child exited before the kill: %v %q\n%s", rd.name, cmd.ProcessState, out.problems, describe())
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatalf("round %s: kill: %v", rd.name, err)
			}
			<-eof // every ack written before the kill has now been read
			err := cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("round %s: child was not killed by SIGKILL: %v %q\n%s", rd.name, err, out.problems, describe())
			}
		} else {
			select {
			case <-eof:
			case <-time.After(20 * time.Second):
				kill()
				t.Fatalf("round %s: child did not finish\n%s", rd.name, describe())
			}
			if err := cmd.Wait(); err != nil || !out.closed {
				t.Fatalf("round %s: child did not close cleanly: %v (closed line: %v) %q\n%s", rd.name, err, out.closed, out.problems, describe())
			}
		}
		if len(out.problems) > 0 {
			t.Fatalf("round %s: child reported: %q\n%s", rd.name, out.problems, describe())
		}
		if rd.kill {
			t.Logf("round %s: killed %v after the child opened the store; %d acks", rd.name, delay, out.nacks)
		} else {
			t.Logf("round %s: child wrote for %dms and closed the store; %d acks", rd.name, runMillis, out.nacks)
		}
		if rd.kill {
			killedAcks += out.nacks
		}
		totalAcks += out.nacks

		// What the child found on open must match what we know.
		for w := range crashWriters {
			s, k := out.start[w], known[w]
			if exact && s != k {
				t.Errorf("round %s: writer %d: child opened the store with cur = %d, verified state had %d", rd.name, w, s, k)
			}
			if !exact && s != k && s != nextCommitted(w, k) {
				t.Errorf("round %s: writer %d: child opened the store with cur = %d after a crash, but the last acknowledged transaction was %d", rd.name, w, s, k)
			}
		}

		if !rd.reopen {
			// Remember the acks; the next child's start report is checked
			// against them.
			for w := range crashWriters {
				known[w] = out.start[w]
				if n := len(out.acks[w]); n > 0 {
					known[w] = out.acks[w][n-1]
				}
			}
			exact = false
			continue
		}

		db, err := bolt.Open(path, bolt.Options{})
		if err != nil {
			t.Fatalf("round %s: reopen after the child: %v", rd.name, err)
		}
		cur, err := verifyCrashStore(ctx, db)
		if err != nil {
			t.Errorf("round %s: %v", rd.name, err)
		}
		if err := checkAcks(out.start, out.acks, cur, !rd.kill); err != nil {
			t.Errorf("round %s: %v", rd.name, err)
		}
		unacked := 0
		for w := range crashWriters {
			if n := len(out.acks[w]); (n > 0 && cur[w] > out.acks[w][n-1]) || (n == 0 && cur[w] > out.start[w]) {
				unacked++
			}
		}
		if err := db.Close(); err != nil {
			t.Fatalf("round %s: close: %v", rd.name, err)
		}
		if t.Failed() {
			t.FailNow()
		}
		t.Logf("round %s: store verified; %d writers' in-flight transaction committed without its ack", rd.name, unacked)
		known, exact = cur, true
	}
	t.Logf("%d acknowledged transactions over %d rounds; final cur %v", totalAcks, len(rounds), known)
	if killedAcks == 0 {
		// A slow machine may ack nothing in one round, but not in all.
		t.Error("no transaction was acknowledged before any kill: the crash rounds tested nothing")
	}
}

// TestCrashVerifier shows that the checks of TestCrash catch lost,
// partial, resurrected and failed writes: it builds a valid state, checks
// that it verifies, then breaks it in one way at a time.
func TestCrashVerifier(t *testing.T) {
	ctx := context.Background()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "meta.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	var start, cur [crashWriters]int
	var acks [crashWriters][]int
	for w := range crashWriters {
		prev := 0
		for i := 1; i <= 40+w; i++ {
			err := db.Update(ctx, crashTxn(w, i, prev))
			if failing(w, i) {
				if !errors.Is(err, errInjected) {
					t.Fatalf("writer %d txn %d: %v, want errInjected", w, i, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			acks[w] = append(acks[w], i)
			prev = i
		}
	}
	if cur, err = verifyCrashStore(ctx, db); err != nil {
		t.Fatalf("valid state: %v", err)
	}
	if err := checkAcks(start, acks, cur, true); err != nil {
		t.Fatalf("valid acks: %v", err)
	}

	// The ack checks.
	const w = 3
	last := acks[w][len(acks[w])-1]
	lost := cur
	lost[w] = acks[w][len(acks[w])-2]
	if checkAcks(start, acks, lost, false) == nil {
		t.Error("checkAcks misses a lost acknowledged transaction")
	}
	inflight := cur
	inflight[w] = nextCommitted(w, last)
	if err := checkAcks(start, acks, inflight, false); err != nil {
		t.Errorf("checkAcks rejects the in-flight transaction committing: %v", err)
	}
	if checkAcks(start, acks, inflight, true) == nil {
		t.Error("checkAcks misses an unacknowledged commit after a clean close")
	}
	phantom := cur
	phantom[w] = nextCommitted(w, nextCommitted(w, last))
	if checkAcks(start, acks, phantom, false) == nil {
		t.Error("checkAcks misses a commit beyond the one in flight")
	}

	// The store checks. Each mutation is undone after it is checked.
	hist := expectedHist(w, last)
	oldest, newest := hist[0], hist[len(hist)-1]
	deleted := oldest - 1
	for failing(w, deleted) {
		deleted--
	}
	failed := last
	for !failing(w, failed) {
		failed--
	}
	put := func(k, v []byte) func(kv.Tx) error {
		return func(tx kv.Tx) error { return tx.Put(k, v) }
	}
	del := func(k []byte) func(kv.Tx) error {
		return func(tx kv.Tx) error { return tx.Delete(k) }
	}
	curVal := strconv.AppendInt(nil, int64(last), 10)
	total := 0
	for w := range crashWriters {
		total += committedCount(w, cur[w])
	}
	totalVal := strconv.AppendInt(nil, int64(total), 10)
	for _, m := range []struct {
		name        string
		break_, fix func(kv.Tx) error
	}{
		{"lost newest hist", del(crashHistKey(w, newest)), put(crashHistKey(w, newest), histValue(w, newest))},
		{"lost older hist", del(crashHistKey(w, oldest)), put(crashHistKey(w, oldest), histValue(w, oldest))},
		{"cur without its hist (partial txn)", put(crashCurKey(w), strconv.AppendInt(nil, int64(nextCommitted(w, last)), 10)), put(crashCurKey(w), curVal)},
		{"lost cur", del(crashCurKey(w)), put(crashCurKey(w), curVal)},
		{"lost tombstone", put(crashHistKey(w, deleted), histValue(w, deleted)), del(crashHistKey(w, deleted))},
		{"failed txn's hist", put(crashHistKey(w, failed), histValue(w, failed)), del(crashHistKey(w, failed))},
		{"failed txn's fail key", put(crashFailKey(w, failed), nil), del(crashFailKey(w, failed))},
		{"wrong hist value", put(crashHistKey(w, newest), []byte("x")), put(crashHistKey(w, newest), histValue(w, newest))},
		{"total off by one", put(crashTotalKey, strconv.AppendInt(nil, int64(total+1), 10)), put(crashTotalKey, totalVal)},
	} {
		if err := db.Update(ctx, m.break_); err != nil {
			t.Fatal(err)
		}
		if _, err := verifyCrashStore(ctx, db); err == nil {
			t.Errorf("verifier misses: %s", m.name)
		} else {
			t.Logf("%s: %v", m.name, err)
		}
		if err := db.Update(ctx, m.fix); err != nil {
			t.Fatal(err)
		}
		if _, err := verifyCrashStore(ctx, db); err != nil {
			t.Fatalf("after undoing %s: %v", m.name, err)
		}
	}
}
