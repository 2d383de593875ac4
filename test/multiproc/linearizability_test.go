package multiproc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/anishathalye/porcupine"
)

// The register model: each blob is a register holding its content. Every
// write stores content no other write uses, and ETags are unique per
// write, so an ETag names exactly one content (checked separately, see
// checkETags): a Put Blob with If-Match is a compare-and-set on the
// content that ETag was read with.

type opKind int

const (
	opGet opKind = iota // Get Blob
	opPut               // unconditional Put Blob
	opCAS               // Put Blob with If-Match
)

type regInput struct {
	key    string
	kind   opKind
	value  string // put, cas: the content written
	expect string // cas: the content read together with the If-Match ETag
}

type regOutput struct {
	value   string // get: the content read
	applied bool   // put, cas: success (for cas: false means 412)
	unknown bool   // put, cas: no answer (transport failure, 503): maybe applied
}

// absent is the state before a blob's first write.
const absent = "<absent>"

var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(regInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, len(keys))
		for i, k := range keys {
			out[i] = byKey[k]
		}
		return out
	},
	Init: func() any { return absent },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(string), input.(regInput), output.(regOutput)
		switch in.kind {
		case opGet:
			return out.value == s, s
		case opPut:
			// Applied, or of unknown outcome: an unknown write returns at
			// "infinity", so the checker may also order it after every
			// other operation, where its effect is never observed.
			return true, in.value
		case opCAS:
			match := s == in.expect
			switch {
			case out.unknown:
				// It took effect if and only if the condition held where
				// it is linearized; ordering it last covers "never arrived".
				if match {
					return true, in.value
				}
				return true, s
			case out.applied:
				return match, in.value
			default:
				// 412: a valid operation whose effect is none, which the
				// server may only answer when the condition was false.
				return !match, s
			}
		}
		return false, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		res := "ok"
		switch {
		case out.unknown:
			res = "unknown"
		case in.kind == opCAS && !out.applied:
			res = "412"
		}
		switch in.kind {
		case opGet:
			return fmt.Sprintf("get(%s) → %q", in.key, out.value)
		case opPut:
			return fmt.Sprintf("put(%s, %q) → %s", in.key, in.value, res)
		default:
			return fmt.Sprintf("cas(%s, if %q, %q) → %s", in.key, in.expect, in.value, res)
		}
	},
	DescribeState: func(state any) string { return fmt.Sprintf("%q", state) },
}

// TestRegisterModel checks the model itself on small histories: it must
// reject a stale read, a CAS that succeeded against another value and a
// 412 while the condition held, and accept unknown outcomes both ways.
func TestRegisterModel(t *testing.T) {
	put := func(v string, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: regInput{key: "k", kind: opPut, value: v}, Output: regOutput{applied: true}, Call: call, Return: ret}
	}
	get := func(v string, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: regInput{key: "k", kind: opGet}, Output: regOutput{value: v}, Call: call, Return: ret}
	}
	cas := func(expect, v string, out regOutput, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: regInput{key: "k", kind: opCAS, value: v, expect: expect}, Output: out, Call: call, Return: ret}
	}
	inf := int64(math.MaxInt64)
	for _, tc := range []struct {
		name string
		ok   bool
		h    []porcupine.Operation
	}{
		{"sequential", true, []porcupine.Operation{put("a", 0, 1), get("a", 2, 3), cas("a", "b", regOutput{applied: true}, 4, 5), get("b", 6, 7)}},
		{"stale read", false, []porcupine.Operation{put("a", 0, 1), put("b", 2, 3), get("a", 4, 5)}},
		{"cas against another value", false, []porcupine.Operation{put("a", 0, 1), put("b", 2, 3), cas("a", "c", regOutput{applied: true}, 4, 5)}},
		{"412 while the condition held", false, []porcupine.Operation{put("a", 0, 1), cas("a", "c", regOutput{}, 2, 3), get("a", 4, 5)}},
		{"412 after a concurrent write", true, []porcupine.Operation{put("a", 0, 1), cas("a", "c", regOutput{}, 2, 5), put("b", 3, 4), get("b", 6, 7)}},
		{"unknown cas applied", true, []porcupine.Operation{put("a", 0, 1), cas("a", "c", regOutput{unknown: true}, 2, inf), get("c", 6, 7)}},
		{"unknown cas not applied", true, []porcupine.Operation{put("a", 0, 1), cas("a", "c", regOutput{unknown: true}, 2, inf), get("a", 6, 7)}},
		{"unknown put applied then overwritten", true, []porcupine.Operation{put("a", 0, 1), {Input: regInput{key: "k", kind: opPut, value: "u"}, Output: regOutput{unknown: true}, Call: 2, Return: inf}, get("u", 3, 4), put("b", 5, 6), get("b", 7, 8)}},
		{"unknown put cannot come back", false, []porcupine.Operation{put("a", 0, 1), {Input: regInput{key: "k", kind: opPut, value: "u"}, Output: regOutput{unknown: true}, Call: 2, Return: inf}, get("u", 3, 4), put("b", 5, 6), get("b", 7, 8), get("u", 9, 10)}},
	} {
		if got := porcupine.CheckOperations(registerModel, tc.h); got != tc.ok {
			t.Errorf("%s: linearizable = %v, want %v", tc.name, got, tc.ok)
		}
	}
	// The failure artifact can be drawn, unknown outcomes included.
	h := []porcupine.Operation{put("a", 0, 1), cas("a", "c", regOutput{unknown: true}, 2, inf), put("b", 3, 4), get("a", 5, 6)}
	res, info := porcupine.CheckOperationsVerbose(registerModel, h, 0)
	if res != porcupine.Illegal {
		t.Fatalf("check: %s, want Illegal", res)
	}
	path, err := visualize(t.TempDir(), info)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("visualization %s: %v, %v", path, fi, err)
	}
}

// visualize writes porcupine's HTML view of a checked history into dir
// and returns its path.
func visualize(dir string, info porcupine.LinearizationInfo) (string, error) {
	f, err := os.CreateTemp(dir, "cerulean-linearizability-*.html")
	if err != nil {
		return "", err
	}
	f.Close()
	return f.Name(), porcupine.VisualizePath(registerModel, info, f.Name())
}

// history collects operations from many goroutines.
type history struct {
	mu  sync.Mutex
	ops []porcupine.Operation
	// etags maps each ETag seen to the content it came with, and back.
	etagContent map[azcore.ETag]string
	contentETag map[string]azcore.ETag
	conflicts   []string
}

func (h *history) add(op porcupine.Operation) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// saw records that content and etag were observed together (a Get Blob
// response, or a Put Blob and the ETag it returned).
func (h *history) saw(content string, etag azcore.ETag) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.etagContent[etag]; ok && c != content {
		h.conflicts = append(h.conflicts, fmt.Sprintf("ETag %s seen with %q and %q", etag, c, content))
	}
	if e, ok := h.contentETag[content]; ok && e != etag {
		h.conflicts = append(h.conflicts, fmt.Sprintf("content %q seen with ETags %s and %s", content, e, etag))
	}
	h.etagContent[etag] = content
	h.contentETag[content] = etag
}

// artifactDir is where failure artifacts go.
func artifactDir() string {
	if d := os.Getenv("CERULEAN_MULTIPROC_ARTIFACTS"); d != "" {
		return d
	}
	return os.TempDir()
}

// neverSent reports whether err is a failure to connect: the request was
// never sent, so it had no effect and is left out of the history.
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// TestLinearizability runs a register workload on a few blobs: clients on
// every process read (Get Blob), compare-and-set (Put Blob with If-Match
// on the ETag they last saw) and overwrite (Put Blob). Midway one process
// is killed with SIGKILL and restarted on the same port. Porcupine must
// find the history linearizable.
func TestLinearizability(t *testing.T) {
	c := newCluster(t, blobSvc)
	ctx := ctxFor(t, 2*time.Minute)
	const (
		perNode   = 3
		keyCount  = 3
		runFor    = 14 * time.Second // workload length
		killAfter = 5 * time.Second
		afterUp   = 4 * time.Second // minimum workload after the restart
		victim    = 1
	)
	keys := make([]string, keyCount)
	for i := range keys {
		keys[i] = fmt.Sprintf("reg%d", i)
	}
	_, err := c.Blob(0).CreateContainer(ctx, "lin", nil)
	must(t, "create container", err)

	t0 := time.Now()
	now := func() int64 { return int64(time.Since(t0)) }
	h := &history{etagContent: map[azcore.ETag]string{}, contentETag: map[string]azcore.ETag{}}
	for _, k := range keys {
		v := "init " + k
		call := now()
		e, err := putBlob(ctx, blockBlob(c.Blob(0), "lin", k), v, nil)
		must(t, "initial put", err)
		h.add(porcupine.Operation{ClientId: 0, Input: regInput{key: k, kind: opPut, value: v}, Output: regOutput{applied: true}, Call: call, Return: now()})
		h.saw(v, e)
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("workload seed %d", seed)
	type stats struct {
		gets, puts, casOK, cas412, unknown, unsent, failedReads int
		afterRestart                                            int // successful operations that started after the victim's restart
	}
	var restartedAt atomic.Int64 // when the victim serves again
	restartedAt.Store(math.MaxInt64)
	all := make([]stats, nodes*perNode)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// halt stops the clients, also when the test ends early.
	halt := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	defer halt()
	for cid := range nodes * perNode {
		node := cid % nodes
		cl := c.Blob(node)
		bbs := map[string]*blockblob.Client{}
		for _, k := range keys {
			bbs[k] = blockBlob(cl, "lin", k)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(cid)))
			st := &all[cid]
			type knowledge struct {
				content string
				etag    azcore.ETag
			}
			known := map[string]knowledge{}
			backoff := func() {
				select {
				case <-stop:
				case <-time.After(time.Duration(50+rng.IntN(50)) * time.Millisecond):
				}
			}
			for seq := 0; seq < 3000; seq++ { // bounded: about 1,000 operations per second in all here
				select {
				case <-stop:
					return
				default:
				}
				key := keys[rng.IntN(len(keys))]
				kn, haveETag := known[key]
				in := nextRegOp(rng, key, cid, seq, haveETag, kn.content)
				call := now()
				out, etag, err := runRegOp(ctx, bbs[key], in, kn.etag)
				ret := now()
				code, ecode := status(err)
				switch {
				case err == nil:
					out.applied = in.kind != opGet
					if in.kind == opGet {
						known[key] = knowledge{out.value, etag}
						h.saw(out.value, etag)
					} else {
						known[key] = knowledge{in.value, etag}
						h.saw(in.value, etag)
					}
				case in.kind == opCAS && code == 412 && ecode == string(bloberror.ConditionNotMet):
					delete(known, key)
				case neverSent(err):
					st.unsent++
					delete(known, key)
					backoff()
					continue
				case code != 0 && code != 503:
					t.Errorf("client %d (node %d): %s: unexpected %v", cid, node, registerModel.DescribeOperation(in, out), errOrOK(err))
					return
				case in.kind == opGet:
					// A read without an answer has no effect: left out.
					st.failedReads++
					delete(known, key)
					backoff()
					continue
				default:
					// A write without an answer may or may not have
					// happened: it "returns" at infinity.
					out.unknown, ret = true, math.MaxInt64
					st.unknown++
					delete(known, key)
				}
				h.add(porcupine.Operation{ClientId: cid, Input: in, Output: out, Call: call, Return: ret})
				switch {
				case in.kind == opGet:
					st.gets++
				case out.unknown:
				case in.kind == opPut:
					st.puts++
				case out.applied:
					st.casOK++
				default:
					st.cas412++
				}
				if !out.unknown && call > restartedAt.Load() {
					st.afterRestart++
				}
				if ctx.Err() != nil {
					t.Errorf("client %d: %v", cid, ctx.Err())
					return
				}
				if out.unknown {
					backoff()
				}
			}
		}()
	}

	time.Sleep(killAfter)
	killAt := time.Since(t0)
	c.Kill(victim)
	c.Restart(victim)
	upAt := time.Since(t0)
	restartedAt.Store(int64(upAt))
	t.Logf("node %d killed (SIGKILL) at %v, serving again on the same port at %v", victim, killAt.Round(time.Millisecond), upAt.Round(time.Millisecond))
	end := max(runFor, upAt+afterUp)
	time.Sleep(end - time.Since(t0))
	halt()

	var tot stats
	victimAfter := 0
	for cid, s := range all {
		tot.gets += s.gets
		tot.puts += s.puts
		tot.casOK += s.casOK
		tot.cas412 += s.cas412
		tot.unknown += s.unknown
		tot.unsent += s.unsent
		tot.failedReads += s.failedReads
		if cid%nodes == victim {
			victimAfter += s.afterRestart
		}
	}
	t.Logf("history: %d operations on %d keys by %d clients in %v: %d gets, %d puts, %d cas ok, %d cas 412, %d writes of unknown outcome; left out: %d requests never sent, %d reads without answer",
		len(h.ops), len(keys), nodes*perNode, time.Since(t0).Round(time.Millisecond), tot.gets, tot.puts, tot.casOK, tot.cas412, tot.unknown, tot.unsent, tot.failedReads)
	if t.Failed() {
		return
	}
	if tot.casOK == 0 || tot.cas412 == 0 || tot.gets == 0 || tot.puts == 0 {
		t.Errorf("the workload did not exercise every outcome (gets %d, puts %d, cas ok %d, cas 412 %d)", tot.gets, tot.puts, tot.casOK, tot.cas412)
	}
	if victimAfter == 0 {
		t.Errorf("no operation through the restarted node %d succeeded", victim)
	}
	for _, s := range h.conflicts {
		t.Errorf("ETags are not one per write: %s", s)
	}

	checkStart := time.Now()
	res, info := porcupine.CheckOperationsVerbose(registerModel, h.ops, 60*time.Second)
	t.Logf("porcupine: %s for %d operations in %v", res, len(h.ops), time.Since(checkStart).Round(time.Millisecond))
	if res != porcupine.Ok {
		path, err := visualize(artifactDir(), info)
		if err != nil {
			t.Errorf("writing the visualization: %v", err)
		}
		t.Errorf("the history is not linearizable (porcupine: %s); visualization: %s", res, path)
	}
}

// nextRegOp picks a client's next register operation on key: a read, or,
// once the client knows the key's content and ETag, a conditional
// (If-Match) or an unconditional write.
func nextRegOp(rng *rand.Rand, key string, cid, seq int, known bool, content string) regInput {
	switch r := rng.IntN(10); {
	case r < 4 || !known:
		return regInput{key: key, kind: opGet}
	case r < 8:
		return regInput{key: key, kind: opCAS, value: fmt.Sprintf("c%d-%d", cid, seq), expect: content}
	default:
		return regInput{key: key, kind: opPut, value: fmt.Sprintf("c%d-%d", cid, seq)}
	}
}

// runRegOp sends a register operation as the Blob request it stands for
// (Get Blob, Put Blob, Put Blob with If-Match: etag).
func runRegOp(ctx context.Context, bb *blockblob.Client, in regInput, etag azcore.ETag) (out regOutput, got azcore.ETag, err error) {
	switch in.kind {
	case opGet:
		out.value, got, err = getBlob(ctx, bb)
	case opPut:
		got, err = putBlob(ctx, bb, in.value, nil)
	case opCAS:
		got, err = putBlob(ctx, bb, in.value, ifMatch(etag))
	}
	return out, got, err
}
