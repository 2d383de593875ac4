package multiproc

import (
	"context"
	"crypto/md5"
	cryptorand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/anishathalye/porcupine"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// tableWrite is one Insert Entity of the failover test.
type tableWrite struct {
	payload string
	acked   bool
}

// failoverEnv names what scripts/with-postgres-standby.sh exports.
const failoverEnv = "CERULEAN_TEST_FAILOVER_DSN"

// pgPair is the primary and its synchronous standby that
// scripts/with-postgres-standby.sh started.
type pgPair struct {
	dsn         string // both hosts, target_session_attrs=read-write
	primaryData string
	standby     *pgServer // pg_ctl on the standby's data directory
	primaryAddr string    // the first host of dsn
}

func pgPairFromEnv(t *testing.T) *pgPair {
	t.Helper()
	skipShort(t)
	dsn := os.Getenv(failoverEnv)
	if dsn == "" {
		t.Skipf("%s is not set: the failover test needs a primary and a synchronous standby of its own: bash scripts/with-postgres-standby.sh go test -count=1 -run TestPrimaryFailover -v ./test/multiproc/", failoverEnv)
	}
	p := &pgPair{dsn: dsn, primaryData: os.Getenv("CERULEAN_TEST_PRIMARY_DATA"),
		standby: &pgServer{bin: os.Getenv("CERULEAN_TEST_PGBIN"), data: os.Getenv("CERULEAN_TEST_STANDBY_DATA"), user: os.Getenv("CERULEAN_TEST_PGUSER"), log: os.Getenv("CERULEAN_TEST_STANDBY_LOG")}}
	if p.primaryData == "" || p.standby.bin == "" || p.standby.data == "" || p.standby.user == "" {
		t.Fatalf("%s is set, but not CERULEAN_TEST_PRIMARY_DATA, CERULEAN_TEST_PGBIN, CERULEAN_TEST_STANDBY_DATA and CERULEAN_TEST_PGUSER (scripts/with-postgres-standby.sh exports them all)", failoverEnv)
	}
	cfg, err := pgx.ParseConfig(dsn)
	must(t, "parse "+failoverEnv, err)
	// Fallbacks also holds the same host again without TLS under
	// sslmode=prefer: count addresses.
	p.primaryAddr = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	addrs := map[string]bool{p.primaryAddr: true}
	for _, f := range cfg.Fallbacks {
		addrs[net.JoinHostPort(f.Host, strconv.Itoa(int(f.Port)))] = true
	}
	if len(addrs) != 2 {
		t.Fatalf("%s names %d hosts, want 2 (the primary, then the standby)", failoverEnv, len(addrs))
	}
	return p
}

// killPrimary ends every process of the primary server with SIGKILL, as
// the loss of its machine would: no shutdown checkpoint, connections cut.
// pg_ctl starts the postmaster in a session of its own, so its process
// group is the server.
func (p *pgPair) killPrimary(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.primaryData, "postmaster.pid"))
	must(t, "read the primary's postmaster.pid", err)
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	must(t, "postmaster.pid", err)
	pgid, err := syscall.Getpgid(pid)
	must(t, "the postmaster's process group", err)
	if pgid != pid {
		t.Fatalf("the postmaster (pid %d) leads no process group of its own (pgid %d)", pid, pgid)
	}
	must(t, "SIGKILL the primary", syscall.Kill(-pgid, syscall.SIGKILL))
	// Gone when its port refuses connections.
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", p.primaryAddr, time.Second)
		if err != nil {
			return
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the primary still accepts connections on %s 10s after SIGKILL", p.primaryAddr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// failoverSchema creates a fresh schema through the multi-host DSN (on the
// primary then) and drops it at cleanup (on the promoted standby).
func failoverSchema(t *testing.T, base string) string {
	t.Helper()
	var b [6]byte
	_, _ = cryptorand.Read(b[:])
	schema := "cerulean_test_" + hex.EncodeToString(b[:])
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("%s is set but creating a schema failed: %v", failoverEnv, err)
	}
	t.Cleanup(func() {
		if err := exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	dsn, err := pgtest.WithParams(base, map[string]string{"search_path": schema, "application_name": schema})
	must(t, "schema DSN", err)
	return dsn
}

// TestPrimaryFailover: three `cerulean serve` processes share a
// PostgreSQL primary with a synchronous standby (synchronous_commit=on),
// reached through one multi-host DSN with target_session_attrs=read-write.
// Under load (a register workload on a few blobs: Get Blob, Put Blob, Put
// Blob with If-Match; writers of new blobs with Content-MD5; writers of
// new table entities) every process of the primary is killed with
// SIGKILL, and the standby is promoted (pg_ctl promote). Meanwhile
// /readyz must answer 503; the front ends must serve again by themselves
// (same PIDs), every acknowledged write must be there byte for byte, and
// porcupine must find the whole history (before, during and after the
// failover) linearizable. A write that got an error or no answer in
// between is of unknown outcome: it may or may not have happened, but
// entirely or not at all.
func TestPrimaryFailover(t *testing.T) {
	pair := pgPairFromEnv(t)
	c := startCluster(t, failoverSchema(t, pair.dsn), blobSvc, tableSvc, metricsSvc)
	ctx := ctxFor(t, 3*time.Minute)
	const (
		perNode      = 2 // register clients per process
		keyCount     = 3
		warmup       = 4 * time.Second
		detect       = 2 * time.Second // from the loss to the promotion (a failover manager's decision)
		after        = 4 * time.Second // load after every process recovered
		recoverBound = 30 * time.Second
		hangBound    = 20 * time.Second
		ctr          = "failover"
	)
	_, err := c.Blob(0).CreateContainer(ctx, ctr, nil)
	must(t, "create container", err)
	_, err = c.Table(0).CreateTable(ctx, ctr, nil)
	must(t, "create table", err)
	var pids [nodes]int
	for i := range nodes {
		pids[i], _ = c.Alive(i)
	}
	keys := make([]string, keyCount)
	for i := range keys {
		keys[i] = fmt.Sprintf("reg%d", i)
	}
	t0 := time.Now()
	now := func() int64 { return int64(time.Since(t0)) }
	h := &history{etagContent: map[azcore.ETag]string{}, contentETag: map[string]azcore.ETag{}}
	for _, k := range keys {
		v := "init " + k
		call := now()
		e, err := putBlob(ctx, blockBlob(c.Blob(0), ctr, k), v, nil)
		must(t, "initial put", err)
		h.add(porcupine.Operation{ClientId: 0, Input: regInput{key: k, kind: opPut, value: v}, Output: regOutput{applied: true}, Call: call, Return: now()})
		h.saw(v, e)
	}

	var (
		mu       sync.Mutex
		blobs    = map[string]*blobHistory{}
		entities = map[string]tableWrite{} // by RowKey
		slow     []string
		failures = map[string]int{} // failed requests by kind
		ops      atomic.Int64       // requests sent
	)
	fail := func(what string, err error) {
		st, code := status(err)
		kind := fmt.Sprintf("%s: %d %s", what, st, code)
		if st == 0 {
			kind = what + ": no HTTP answer"
		}
		mu.Lock()
		failures[kind]++
		mu.Unlock()
	}
	timed := func(what string, node int, start time.Time) {
		if d := time.Since(start); d > hangBound {
			mu.Lock()
			slow = append(slow, fmt.Sprintf("%s through node %d at %v took %v", what, node, start.Sub(t0).Round(time.Millisecond), d.Round(time.Millisecond)))
			mu.Unlock()
		}
	}
	// expected reports whether err is an answer a request may get while
	// the database fails over: 503 ServerBusy, 500 InternalError, or no
	// answer at all.
	expected := func(err error) bool {
		st, code := status(err)
		return st == 0 || st == http.StatusServiceUnavailable && code == "ServerBusy" || st == http.StatusInternalServerError && code == "InternalError"
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("workload seed %d", seed)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	halt := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	defer halt()
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	backoff := func(rng *rand.Rand) {
		select {
		case <-stop:
		case <-time.After(time.Duration(50+rng.IntN(50)) * time.Millisecond):
		}
	}
	var unknownWrites, failedReads atomic.Int64
	// The register clients.
	for cid := range nodes * perNode {
		node := cid % nodes
		cl := c.Blob(node)
		bbs := map[string]*blockblob.Client{}
		for _, k := range keys {
			bbs[k] = blockBlob(cl, ctr, k)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(cid)))
			type knowledge struct {
				content string
				etag    azcore.ETag
			}
			known := map[string]knowledge{}
			for seq := 0; seq < 20000 && !stopped(); seq++ {
				key := keys[rng.IntN(len(keys))]
				kn, haveETag := known[key]
				in := nextRegOp(rng, key, cid, seq, haveETag, kn.content)
				start := time.Now()
				call := now()
				out, etag, err := runRegOp(ctx, bbs[key], in, kn.etag)
				ret := now()
				ops.Add(1)
				timed("register "+registerModel.DescribeOperation(in, out), node, start)
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
				case in.kind == opCAS && code == http.StatusPreconditionFailed && ecode == string(bloberror.ConditionNotMet):
					delete(known, key)
				case !expected(err):
					t.Errorf("client %d (node %d): %s: unexpected %v", cid, node, registerModel.DescribeOperation(in, out), errOrOK(err))
					return
				case neverSent(err):
					fail("register (never sent)", err)
					delete(known, key)
					backoff(rng)
					continue
				case in.kind == opGet:
					// A read without an answer has no effect: left out.
					fail("register get", err)
					failedReads.Add(1)
					delete(known, key)
					backoff(rng)
					continue
				default:
					// A write without an answer may or may not have
					// happened: it "returns" at infinity.
					fail("register write", err)
					out.unknown, ret = true, math.MaxInt64
					unknownWrites.Add(1)
					delete(known, key)
				}
				h.add(porcupine.Operation{ClientId: cid, Input: in, Output: out, Call: call, Return: ret})
				if out.unknown {
					backoff(rng)
				}
			}
		}()
	}
	// The writers of new blobs, one per process.
	for w := range nodes {
		node := w
		cc := c.Blob(node).ServiceClient().NewContainerClient(ctr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(100+w)))
			for seq := 0; seq < 20000 && !stopped(); seq++ {
				name := fmt.Sprintf("dur-%d-%d", w, seq)
				data := content(w, seq, 1+rng.IntN(256<<10))
				sum := md5.Sum(data)
				start := time.Now()
				_, err := cc.NewBlockBlobClient(name).Upload(ctx, streamingBody(data), &blockblob.UploadOptions{TransactionalValidation: blob.TransferValidationTypeMD5(sum[:])})
				ops.Add(1)
				timed("put blob "+name, node, start)
				if err != nil && !expected(err) {
					t.Errorf("writer %d: put %s: unexpected %v", w, name, errOrOK(err))
					return
				}
				if err != nil {
					fail("put blob", err)
				}
				mu.Lock()
				blobs[name] = &blobHistory{node: node, versions: []blobVersion{{md5: sum, size: len(data), acked: err == nil}}}
				mu.Unlock()
				if err != nil {
					backoff(rng)
				}
			}
		}()
	}

	// The writers of new entities, one per process.
	for w := range nodes {
		node := w
		tc := c.Table(node).NewClient(ctr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(200+w)))
			for seq := 0; seq < 20000 && !stopped(); seq++ {
				rk := fmt.Sprintf("%d-%06d", w, seq)
				payload := hex.EncodeToString(content(w, seq, 16+rng.IntN(2048)))
				body, _ := json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": rk, "Payload": payload})
				start := time.Now()
				_, err := tc.AddEntity(ctx, body, nil)
				ops.Add(1)
				timed("insert entity "+rk, node, start)
				if err != nil && !expected(err) {
					t.Errorf("writer %d: insert %s: unexpected %v", w, rk, errOrOK(err))
					return
				}
				if err != nil {
					fail("insert entity", err)
				}
				mu.Lock()
				entities[rk] = tableWrite{payload: payload, acked: err == nil}
				mu.Unlock()
				if err != nil {
					backoff(rng)
				}
			}
		}()
	}

	time.Sleep(warmup)
	killAt := time.Since(t0)
	pair.killPrimary(t)
	goneAt := time.Since(t0)
	// A balancer polling /readyz takes the front ends out meanwhile.
	for i := range nodes {
		if code, body := c.waitReady(i, http.StatusServiceUnavailable, detect); code != http.StatusServiceUnavailable {
			t.Errorf("node %d: /readyz with the primary lost: %d %q", i, code, body)
		}
	}
	time.Sleep(detect - (time.Since(t0) - goneAt))
	promoteAt := time.Since(t0)
	if _, err := pair.standby.ctl(90*time.Second, "-w", "-t", "60", "promote"); err != nil {
		t.Fatalf("promoting the standby: %v\n%s", err, tail(pair.standby.log, 20))
	}
	promotedAt := time.Since(t0)
	t.Logf("primary killed (SIGKILL, every process) at %v, refusing connections at %v; standby promoted at %v, done at %v",
		killAt.Round(time.Millisecond), goneAt.Round(time.Millisecond), promoteAt.Round(time.Millisecond), promotedAt.Round(time.Millisecond))

	// Every process serves a write again by itself (probed side by side).
	var recovered [nodes]time.Duration
	probeErrs := make([]error, nodes)
	var pwg sync.WaitGroup
	for i := range nodes {
		bb := c.Blob(i).ServiceClient().NewContainerClient(ctr).NewBlockBlobClient(fmt.Sprintf("probe-%d", i))
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			deadline := time.Now().Add(recoverBound)
			for {
				octx, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, err := bb.UploadBuffer(octx, []byte("probe"), nil)
				cancel()
				if err == nil {
					recovered[i] = time.Since(t0) - killAt
					return
				}
				if !expected(err) {
					probeErrs[i] = fmt.Errorf("node %d after the promotion: %v", i, errOrOK(err))
					return
				}
				if time.Now().After(deadline) {
					probeErrs[i] = fmt.Errorf("node %d still failing %v after the promotion: %v\n%s", i, recoverBound, err, tail(c.nodes[i].logPath, 20))
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	pwg.Wait()
	for _, err := range probeErrs {
		if err != nil {
			t.Fatal(err)
		}
	}
	recoveredAt := time.Since(t0)
	t.Logf("every process served a write again %v after the primary was killed, %v after the promotion ended (per process, from the kill: %v)",
		(recoveredAt - killAt).Round(time.Millisecond), (recoveredAt - promotedAt).Round(time.Millisecond), recovered)
	for i := range nodes {
		if code, body := c.waitReady(i, http.StatusOK, recoverBound); code != http.StatusOK {
			t.Errorf("node %d: /readyz after the failover: %d %q", i, code, body)
		}
	}
	time.Sleep(after)
	halt()
	for i := range nodes {
		if pid, alive := c.Alive(i); !alive || pid != pids[i] {
			t.Errorf("node %d: pid %d alive %v, was pid %d: the process did not survive the failover", i, pid, alive, pids[i])
		}
	}
	for _, s := range slow {
		t.Errorf("request slower than %v: %s", hangBound, s)
	}
	var kinds []string
	for k := range failures {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("failed during the failover: %4d × %s", failures[k], k)
	}

	// Every acknowledged blob is there, byte for byte; every other one is
	// whole or absent.
	var acked, unknownPresent, unknownAbsent, lost int
	names := make([]string, 0, len(blobs))
	for n := range blobs {
		names = append(names, n)
	}
	sort.Strings(names)
	for k, name := range names {
		v := blobs[name].versions[0]
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp, err := c.Blob(k%nodes).DownloadStream(octx, ctr, name, nil)
		var got []byte
		if err == nil {
			got, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		cancel()
		st, code := status(err)
		switch {
		case st == http.StatusNotFound && code == string(bloberror.BlobNotFound) && !v.acked:
			unknownAbsent++
		case st == http.StatusNotFound && code == string(bloberror.BlobNotFound):
			lost++
			t.Errorf("blob %s: acknowledged, missing after the failover", name)
		case err != nil:
			t.Errorf("checker: get %s: %v", name, err)
		case md5.Sum(got) != v.md5 || len(got) != v.size:
			t.Errorf("blob %s: %d bytes with MD5 %x, want %d bytes with MD5 %x", name, len(got), md5.Sum(got), v.size, v.md5)
		case v.acked:
			acked++
		default:
			unknownPresent++
		}
	}
	t.Logf("durability: %d blobs written, %d acknowledged all present byte for byte (lost: %d); of %d without an answer, %d were applied whole, %d not at all",
		len(blobs), acked, lost, unknownPresent+unknownAbsent, unknownPresent, unknownAbsent)
	if acked == 0 {
		t.Errorf("no blob write was acknowledged")
	}
	// Every acknowledged entity is there with its properties; every other
	// one is there whole or not at all.
	found := map[string]string{}
	pager := c.Table(1).NewClient(ctr).NewListEntitiesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		must(t, "query entities", err)
		for _, raw := range page.Entities {
			var e struct{ RowKey, Payload string }
			must(t, "decode entity", json.Unmarshal(raw, &e))
			found[e.RowKey] = e.Payload
		}
	}
	var entAcked, entUnknownPresent, entUnknownAbsent, entLost int
	for rk, w := range entities {
		payload, ok := found[rk]
		switch {
		case ok && payload != w.payload:
			t.Errorf("entity %s: Payload of %d characters, not the %d inserted", rk, len(payload), len(w.payload))
		case !ok && w.acked:
			entLost++
			t.Errorf("entity %s: acknowledged, missing after the failover", rk)
		case !ok:
			entUnknownAbsent++
		case w.acked:
			entAcked++
		default:
			entUnknownPresent++
		}
	}
	for rk := range found {
		if _, ok := entities[rk]; !ok {
			t.Errorf("entity %s exists, but was never inserted", rk)
		}
	}
	t.Logf("durability: %d entities inserted, %d acknowledged all present with their properties (lost: %d); of %d without an answer, %d were applied, %d not",
		len(entities), entAcked, entLost, entUnknownPresent+entUnknownAbsent, entUnknownPresent, entUnknownAbsent)
	if entAcked == 0 {
		t.Errorf("no entity insert was acknowledged")
	}
	acked += entAcked
	lost += entLost

	for _, s := range h.conflicts {
		t.Errorf("ETags are not one per write: %s", s)
	}
	var regAfter int
	for _, op := range h.ops {
		if op.Call > int64(recoveredAt) && !op.Output.(regOutput).unknown {
			regAfter++
		}
	}
	if regAfter == 0 {
		t.Errorf("no register operation completed after the failover")
	}
	checkStart := time.Now()
	res, info := porcupine.CheckOperationsVerbose(registerModel, h.ops, 60*time.Second)
	t.Logf("linearizability: porcupine %s for %d register operations (%d of unknown outcome, %d reads without answer left out; %d after the recovery) in %v",
		res, len(h.ops), unknownWrites.Load(), failedReads.Load(), regAfter, time.Since(checkStart).Round(time.Millisecond))
	if res != porcupine.Ok {
		path, err := visualize(artifactDir(), info)
		if err != nil {
			t.Errorf("writing the visualization: %v", err)
		}
		t.Errorf("the history is not linearizable (porcupine: %s); visualization: %s", res, path)
	}
	t.Logf("failover: %d requests in %v; %d acknowledged writes (blobs and entities), lost %d; linearizability %s; time to recover %v from the kill (%v after the promotion)",
		ops.Load(), time.Since(t0).Round(time.Millisecond), acked, lost, res, (recoveredAt - killAt).Round(time.Millisecond), (recoveredAt - promotedAt).Round(time.Millisecond))
}
