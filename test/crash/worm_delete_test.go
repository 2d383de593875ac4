package crash

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	dlservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
)

// Deletes under immutable storage, killed mid-flight. A server of its own
// serves three accounts: the dev account with blob versioning and
// version-level immutability (--blob-immutability), a flat account
// without versioning whose containers take container-level WORM settings
// through the admin endpoint /.cerulean/worm (README "Container-level
// immutability (WORM)"), and an account with a hierarchical namespace on
// the dfs port. Workers, at the same time:
//
//   - fill containers with hundreds of blobs, put a legal hold, an
//     Unlocked or a Locked time-based retention policy on them, send a
//     Delete Blob of every blob and Delete Container (and, under a Locked
//     policy, the control plane's delete and a policy delete), each of
//     which must be refused with its status and code; then clear the
//     hold or delete the Unlocked policy and delete half of the blobs and
//     the container, which must succeed;
//   - fill a versioned container, put a legal hold on a third of its
//     blobs and an Unlocked policy on another third (Set Blob Legal Hold,
//     Set Blob Immutability Policy), delete every blob (the protected
//     ones must be refused, the others must go) and the container
//     (refused: it has versions), then clear the holds and delete those
//     blobs;
//   - on the hierarchical account, fill a directory tree d/ of a
//     filesystem, and a directory e/ holding two empty directories and one
//     file, under a legal hold, and delete both recursively (refused
//     whole: nothing of them may go), along with a subdirectory and a file
//     of d; then clear the hold and delete them recursively, which must
//     succeed; on a filesystem without a hold the recursive deletes must
//     succeed at once.
//
// The server is killed with SIGKILL at a random moment and restarted;
// every worker resumes its object where the kill left it (a request
// without answer is sent again; the model allows either outcome of it).
// After each restart: every blob whose protection was acknowledged is
// there with its content and its protection (the container's hold or
// policy, the version's hold or policy); every acknowledged delete is gone;
// a delete without answer left its blob, container or directory whole or
// gone, never part of it; a cleared hold or a deleted policy stays
// cleared.

const (
	wormFlatAcct = "wormflat"
	wormHNSAcct  = "wormhns"
	wormHoldTag  = "crashtrial"
	wormDays     = 1 // retention (days); nothing in the trial outlives it
)

// cw kinds: the protection of a container-level WORM container.
const (
	cwHold     = iota // a legal hold, cleared later
	cwUnlocked        // an Unlocked policy, deleted later
	cwLocked          // a Locked policy: stays for good
)

var cwKindName = [...]string{"legal hold", "Unlocked policy", "Locked policy"}

// Phases of an object; each is resumed after a kill.
const (
	phFill    = iota // blobs being uploaded
	phProtect        // the protection being set
	phRefuse         // deletes that must be refused
	phRelease        // the protection being removed
	phDelete         // deletes that must succeed
	phDone
)

// cwObj is a container with a container-level WORM setting.
type cwObj struct {
	owner     int
	name      string
	kind      int
	n         int
	acked     []bool  // phFill: which blobs were acknowledged
	blobs     []state // from phProtect: present, deleting (no answer), absent
	phase     int
	protected state // absent (not sent), unknown (no answer), present
	released  state
	cont      state // present, deleting, absent
	gone      bool  // found deleted after a restart: nothing more to check
}

// viProt: a version-level blob's protection.
const (
	viNone = iota
	viHold
	viPolicy
)

// viObj is a versioned container whose blobs carry version-level
// protection.
type viObj struct {
	name    string
	n       int
	acked   []bool
	prot    []int   // viNone, viHold, viPolicy
	protSt  []state // absent (not sent), unknown, present
	cleared []state // viHold: the hold's clearing
	blobs   []state
	phase   int
}

// hnObj is a filesystem whose directory tree d/ is deleted recursively.
type hnObj struct {
	name      string
	held      bool
	n         int
	acked     []bool
	phase     int
	protected state
	released  state
	dir       state // d: present, deleting, absent
	eMade     bool  // e/x, e/y and e/one acknowledged
	eDir      state // e (when made): present, deleting, absent
	done      bool  // found deleted after a restart
}

// hnE are the paths of the directory e: two empty subdirectories and
// one file, e/one (content index eIdx), the one thing that protects it.
var hnE = []string{"e", "e/x", "e/y", "e/one"}

const eIdx = 1 << 20

type wormModel struct {
	mu   sync.Mutex
	cws  []*cwObj
	vis  []*viObj
	hns  []*hnObj
	errs []string

	refused       int // deletes refused as they must be
	blobDeletes   int // deletes acknowledged that had to succeed
	contDeletes   int
	dirDeletes    int
	unknowns      int // requests without answer
	protectChecks int // protected blobs found whole after a restart
	goneChecks    int // acknowledged deletes found gone after a restart
}

func (m *wormModel) bad(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errs = append(m.errs, fmt.Sprintf(format, args...))
}

func (m *wormModel) count(p *int, k int) {
	m.mu.Lock()
	*p += k
	m.mu.Unlock()
}

// wormClients are the trial's clients, retries off.
type wormClients struct {
	tr   *http.Transport
	dev  *azblob.Client // versioning, version-level immutability
	flat *azblob.Client // container-level WORM
	hnsB *azblob.Client // the hierarchical account's Blob API
	hnsD *dlservice.Client
	adm  *wormAdmin
}

func newWORMClients(t *testing.T, port, dfsPort int) *wormClients {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	hc := &http.Client{Transport: tr, Timeout: opTimeout}
	opts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}
	w := &wormClients{tr: tr, adm: &wormAdmin{origin: fmt.Sprintf("http://127.0.0.1:%d", port), hc: hc}}
	blobClient := func(acct string) *azblob.Client {
		cred, err := azblob.NewSharedKeyCredential(acct, app.DevKey)
		must(t, err)
		c, err := azblob.NewClientWithSharedKeyCredential(fmt.Sprintf("http://127.0.0.1:%d/%s", port, acct), cred, &azblob.ClientOptions{ClientOptions: opts})
		must(t, err)
		return c
	}
	w.dev, w.flat, w.hnsB = blobClient(app.DevAccount), blobClient(wormFlatAcct), blobClient(wormHNSAcct)
	dcred, err := azdatalake.NewSharedKeyCredential(wormHNSAcct, app.DevKey)
	must(t, err)
	w.hnsD, err = dlservice.NewClientWithSharedKeyCredential(fmt.Sprintf("http://127.0.0.1:%d/%s", dfsPort, wormHNSAcct), dcred, &dlservice.ClientOptions{ClientOptions: opts})
	must(t, err)
	return w
}

// wormAdmin calls the container-level WORM admin endpoint, signed with
// Shared Key over the path without /.cerulean/worm (README,
// "Container-level immutability (WORM)").
type wormAdmin struct {
	origin string
	hc     *http.Client
}

// do sends method to /.cerulean/worm/{account}/{path}; err is set only
// when no answer came.
func (a *wormAdmin) do(ctx context.Context, account, method, path, ifMatch string, body any) (int, string, map[string]any, error) {
	var rd io.Reader
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return 0, "", nil, err
		}
		rd = bytes.NewReader(raw)
	}
	r, err := http.NewRequestWithContext(ctx, method, a.origin+"/.cerulean/worm/"+account+"/"+path, rd)
	if err != nil {
		return 0, "", nil, err
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if ifMatch != "" {
		r.Header.Set("If-Match", ifMatch)
	}
	r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	r.Header.Set("x-ms-version", "2021-12-02")
	signed := r.Clone(ctx)
	if len(raw) > 0 {
		signed.Header.Set("Content-Length", strconv.Itoa(len(raw)))
	}
	signed.URL.Path = "/" + account + "/" + path
	signed.RequestURI = signed.URL.RequestURI()
	key, _ := base64.StdEncoding.DecodeString(app.DevKey)
	sts := auth.StringToSign(signed, auth.Blob, auth.SharedKey, account, auth.CultureOrder)
	r.Header.Set("Authorization", "SharedKey "+account+":"+auth.ComputeSignature(key, sts))
	resp, err := a.hc.Do(r)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", nil, err
	}
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			return resp.StatusCode, resp.Header.Get("x-ms-error-code"), map[string]any{"raw": string(b)}, nil
		}
	}
	return resp.StatusCode, resp.Header.Get("x-ms-error-code"), out, nil
}

// errNoAnswer stands for a request the kill cut short.
var errNoAnswer = errors.New("no answer")

// answer is the status and x-ms-error-code the server sent with err
// (0, "" for success), or errNoAnswer when it sent none.
func answer(err error) (int, string, error) {
	if err == nil {
		return 0, "", nil
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.RawResponse != nil {
		return re.StatusCode, re.RawResponse.Header.Get("x-ms-error-code"), nil
	}
	return 0, "", errNoAnswer
}

// refusal checks that err is the refusal status/code of what; it returns
// errNoAnswer when the request got none (the kill), errWrong (and records
// a violation) for another answer, nil for the refusal.
func (m *wormModel) refusal(err error, status int, code, what string) error {
	st, c, nerr := answer(err)
	if nerr != nil {
		m.count(&m.unknowns, 1)
		return nerr
	}
	switch {
	case err == nil:
		m.bad("%s: acknowledged, want %d %s (protected)", what, status, code)
	case st != status || c != code:
		m.bad("%s: %d %s, want %d %s", what, st, c, status, code)
	default:
		m.count(&m.refused, 1)
		return nil
	}
	return errWrong // the object stays where it is, for the check after the restart
}

// blobSeed is the content seed of blob i of object name.
func blobSeed(name string, i int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", name, i)
	return h.Sum64()
}

func blobBody(name string, i int) []byte {
	return content(blobSeed(name, i), 100+i%600)
}

func blobName(i int) string { return fmt.Sprintf("b%04d", i) }

func hnFile(i int) string { return fmt.Sprintf("d/s%d/f%04d", i%4, i) }

// parallel runs f(0..n-1) on eight workers; it returns the first error
// (the others stop at their next item).
func parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				mu.Lock()
				stop := first != nil
				mu.Unlock()
				if stop {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// setState sets *p under the model's lock.
func (m *wormModel) setState(p *state, s state) {
	m.mu.Lock()
	*p = s
	m.mu.Unlock()
}

// errWrong stops a worker after a wrong answer (recorded as a violation).
var errWrong = errors.New("wrong answer")

// ok checks that err is success; errNoAnswer when the kill cut the
// request short, errWrong (a violation) for a refusal.
func (m *wormModel) ok(err error, what string) error {
	st, code, nerr := answer(err)
	if nerr != nil {
		m.count(&m.unknowns, 1)
		return nerr
	}
	if err != nil {
		m.bad("%s: %d %s, want success", what, st, code)
		return errWrong
	}
	return nil
}

// admOK is wormAdmin.do that must answer 200; it returns the answer.
func (m *wormModel) admOK(ctx context.Context, cl *wormClients, acct, method, path, ifMatch string, body any) (map[string]any, error) {
	st, code, out, err := cl.adm.do(ctx, acct, method, path, ifMatch, body)
	if err != nil {
		m.count(&m.unknowns, 1)
		return nil, errNoAnswer
	}
	if st != http.StatusOK {
		m.bad("%s %s/%s: %d %s %v, want 200", method, acct, path, st, code, out)
		return nil, errWrong
	}
	return out, nil
}

// admRefused is wormAdmin.do that must answer status and code.
func (m *wormModel) admRefused(ctx context.Context, cl *wormClients, status int, code, acct, method, path, ifMatch string, body any) error {
	st, c, out, err := cl.adm.do(ctx, acct, method, path, ifMatch, body)
	if err != nil {
		m.count(&m.unknowns, 1)
		return errNoAnswer
	}
	if st != status || c != code {
		m.bad("%s %s/%s: %d %s %v, want %d %s", method, acct, path, st, c, out, status, code)
		return errWrong
	}
	m.count(&m.refused, 1)
	return nil
}

// getPolicy returns the container's policy (nil when it has none).
func (m *wormModel) getPolicy(ctx context.Context, cl *wormClients, acct, name string) (map[string]any, error) {
	st, code, out, err := cl.adm.do(ctx, acct, http.MethodGet, name+"/immutabilityPolicies/default", "", nil)
	switch {
	case err != nil:
		m.count(&m.unknowns, 1)
		return nil, errNoAnswer
	case st == http.StatusNotFound && code == "ResourceNotFound":
		return nil, nil
	case st != http.StatusOK:
		m.bad("get policy of %s/%s: %d %s %v", acct, name, st, code, out)
		return nil, errWrong
	}
	return out, nil
}

func policyOf(out map[string]any) (etag, st string, days float64) {
	etag, _ = out["etag"].(string)
	props, _ := out["properties"].(map[string]any)
	st, _ = props["state"].(string)
	days, _ = props["immutabilityPeriodSinceCreationInDays"].(float64)
	return etag, st, days
}

func wormPolicyBody() map[string]any {
	return map[string]any{"properties": map[string]any{"immutabilityPeriodSinceCreationInDays": wormDays}}
}

func holdBody() map[string]any { return map[string]any{"tags": []string{wormHoldTag}} }

// ---- container-level WORM on the flat account ----

// cwWorker makes container after container; owner tells its objects from
// the other workers'.
func (m *wormModel) cwWorker(cl *wormClients, owner, trial int, rng *rand.Rand, stopped stopFn) {
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		var o *cwObj
		m.mu.Lock()
		for _, x := range m.cws {
			if x.owner == owner && x.phase != phDone && !x.gone {
				o = x
			}
		}
		m.mu.Unlock()
		if o == nil {
			name := fmt.Sprintf("cw%d-%d-%d", owner, trial, seq)
			n := 200 + rng.IntN(100)
			if _, err := cl.flat.CreateContainer(ctx, name, nil); err != nil {
				cancel()
				return // without answer: not modelled
			}
			o = &cwObj{owner: owner, name: name, n: n, acked: make([]bool, n), cont: present}
			m.mu.Lock()
			o.kind = len(m.cws) % 3 // each kind in turn
			m.cws = append(m.cws, o)
			m.mu.Unlock()
		}
		err := m.cwRun(ctx, cl, o)
		cancel()
		if err != nil {
			return
		}
	}
}

// cwCodes are the refusals of Delete Blob and Delete Container under
// kind (README, "Container-level immutability (WORM)").
func cwCodes(kind int) (blobCode, contCode string) {
	switch kind {
	case cwHold:
		return "BlobImmutableDueToLegalHold", "ContainerHasLegalHold"
	case cwUnlocked:
		// With blobs; an empty one would be deleted.
		return "BlobImmutableDueToPolicy", "BlobImmutableDueToPolicy"
	}
	return "BlobImmutableDueToPolicy", "ContainerImmutabilityPolicyLocked"
}

// fillBlobs uploads the blobs of container name that acked does not hold
// yet (n in all) and returns their states, all present.
func (m *wormModel) fillBlobs(ctx context.Context, cc *container.Client, name string, acked []bool, n int) ([]state, error) {
	if err := fillAcked(&m.mu, acked, n, func(i int) error {
		_, err := cc.NewBlockBlobClient(blobName(i)).UploadBuffer(ctx, blobBody(name, i), nil)
		return err
	}); err != nil {
		return nil, err
	}
	blobs := make([]state, n)
	for i := range blobs {
		blobs[i] = present
	}
	return blobs, nil
}

func (m *wormModel) cwRun(ctx context.Context, cl *wormClients, o *cwObj) error {
	cc := cl.flat.ServiceClient().NewContainerClient(o.name)
	if o.phase == phFill {
		blobs, err := m.fillBlobs(ctx, cc, o.name, o.acked, o.n)
		if err != nil {
			return err
		}
		m.mu.Lock()
		o.blobs, o.acked, o.phase = blobs, nil, phProtect
		m.mu.Unlock()
	}
	if o.phase == phProtect {
		m.setState(&o.protected, unknown)
		switch o.kind {
		case cwHold:
			if _, err := m.admOK(ctx, cl, wormFlatAcct, http.MethodPost, o.name+"/setLegalHold", "", holdBody()); err != nil {
				return err
			}
		default:
			pol, err := m.getPolicy(ctx, cl, wormFlatAcct, o.name)
			if err != nil {
				return err
			}
			if pol == nil {
				if pol, err = m.admOK(ctx, cl, wormFlatAcct, http.MethodPut, o.name+"/immutabilityPolicies/default", "", wormPolicyBody()); err != nil {
					return err
				}
			}
			if etag, st, _ := policyOf(pol); o.kind == cwLocked && st != "Locked" {
				if _, err := m.admOK(ctx, cl, wormFlatAcct, http.MethodPost, o.name+"/immutabilityPolicies/default/lock", etag, nil); err != nil {
					return err
				}
			}
		}
		m.mu.Lock()
		o.protected, o.phase = present, phRefuse
		m.mu.Unlock()
	}
	if o.phase == phRefuse {
		blobCode, contCode := cwCodes(o.kind)
		// Every blob's delete and the container's, at once.
		err := parallel(o.n+1, func(i int) error {
			if i == o.n {
				_, err := cc.Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, contCode, "Delete Container "+o.name+" ("+cwKindName[o.kind]+")")
			}
			_, err := cc.NewBlobClient(blobName(i)).Delete(ctx, nil)
			return m.refusal(err, http.StatusConflict, blobCode, "Delete Blob "+o.name+"/"+blobName(i)+" ("+cwKindName[o.kind]+")")
		})
		if err != nil {
			return err
		}
		if o.kind == cwLocked {
			// Neither the control plane's delete (the container holds
			// blobs, its policy is Locked) nor the policy's.
			if err := m.admRefused(ctx, cl, http.StatusConflict, "ContainerImmutabilityPolicyLocked", wormFlatAcct, http.MethodDelete, o.name, "", nil); err != nil {
				return err
			}
			pol, err := m.getPolicy(ctx, cl, wormFlatAcct, o.name)
			if err != nil {
				return err
			}
			etag, _, _ := policyOf(pol)
			if err := m.admRefused(ctx, cl, http.StatusConflict, "InvalidOperation", wormFlatAcct, http.MethodDelete, o.name+"/immutabilityPolicies/default", etag, nil); err != nil {
				return err
			}
			m.mu.Lock()
			o.phase = phDone // protected for good
			m.mu.Unlock()
			return nil
		}
		m.mu.Lock()
		o.phase = phRelease
		m.mu.Unlock()
	}
	if o.phase == phRelease {
		m.setState(&o.released, unknown)
		if o.kind == cwHold {
			if _, err := m.admOK(ctx, cl, wormFlatAcct, http.MethodPost, o.name+"/clearLegalHold", "", holdBody()); err != nil {
				return err
			}
		} else {
			pol, err := m.getPolicy(ctx, cl, wormFlatAcct, o.name)
			if err != nil {
				return err
			}
			if pol != nil { // else: deleted by a request without answer
				etag, _, _ := policyOf(pol)
				if _, err := m.admOK(ctx, cl, wormFlatAcct, http.MethodDelete, o.name+"/immutabilityPolicies/default", etag, nil); err != nil {
					return err
				}
			}
		}
		m.mu.Lock()
		o.released, o.phase = present, phDelete
		m.mu.Unlock()
	}
	if o.phase == phDelete {
		// Half of the blobs, then the container.
		err := parallel(o.n, func(i int) error {
			m.mu.Lock()
			st := o.blobs[i]
			if i%2 == 1 || st == absent {
				m.mu.Unlock()
				return nil
			}
			o.blobs[i] = deleting
			m.mu.Unlock()
			_, err := cc.NewBlobClient(blobName(i)).Delete(ctx, nil)
			return m.deleted(err, st, &o.blobs[i], "BlobNotFound", &m.blobDeletes, "Delete Blob "+o.name+"/"+blobName(i)+" after the release")
		})
		if err != nil {
			return err
		}
		m.mu.Lock()
		st := o.cont
		o.cont = deleting
		m.mu.Unlock()
		_, err = cc.Delete(ctx, nil)
		if err := m.deleted(err, st, &o.cont, "ContainerNotFound", &m.contDeletes, "Delete Container "+o.name+" after the release"); err != nil {
			return err
		}
		m.mu.Lock()
		o.phase = phDone
		m.mu.Unlock()
	}
	return nil
}

// deleted records the outcome of a delete that must succeed, of an
// object whose state was prev (now deleting): success, or notFound when
// an earlier delete without answer (prev deleting) went through, makes it
// absent.
func (m *wormModel) deleted(err error, prev state, p *state, notFound string, counter *int, what string) error {
	st, code, nerr := answer(err)
	if nerr != nil {
		m.count(&m.unknowns, 1)
		return nerr
	}
	switch {
	case err == nil:
		m.count(counter, 1)
	case prev == deleting && st == http.StatusNotFound && code == notFound:
	default:
		m.bad("%s: %d %s, want success", what, st, code)
		m.setState(p, prev) // refused: nothing went
		return errWrong
	}
	m.setState(p, absent)
	return nil
}

// listNames lists the blob names of cc (current versions).
func listNames(ctx context.Context, cc *container.Client) (map[string]int64, error) {
	names := map[string]int64{}
	pg := cc.NewListBlobsFlatPager(nil)
	for pg.More() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, it := range page.Segment.BlobItems {
			names[*it.Name] = *it.Properties.ContentLength
		}
	}
	return names, nil
}

// checkBlobs checks blobs (nil: while filling, acked instead) against the
// listing and downloads the blobs whose content must be checked (check);
// a blob whose delete got no answer becomes present or absent as found.
// It returns the number of blobs checked byte for byte and found gone.
func (m *wormModel) checkBlobs(ctx context.Context, cc *container.Client, obj string, n int, blobs []state, acked []bool, name func(int) string, check func(int) bool,
	props func(i int, r blob.DownloadStreamResponse)) {
	listed, err := listNames(ctx, cc)
	if err != nil {
		m.errs = append(m.errs, fmt.Sprintf("%s: list: %v", obj, err))
		return
	}
	var want []int
	for i := 0; i < n; i++ {
		_, ok := listed[name(i)]
		if blobs == nil {
			if acked[i] && !ok {
				m.errs = append(m.errs, fmt.Sprintf("%s/%s: its upload was acknowledged, it is gone", obj, name(i)))
			}
			continue
		}
		switch blobs[i] {
		case present:
			if !ok {
				m.errs = append(m.errs, fmt.Sprintf("%s/%s: gone, though no delete of it was acknowledged", obj, name(i)))
				continue
			}
		case absent:
			if ok {
				m.errs = append(m.errs, fmt.Sprintf("%s/%s: there after its delete was acknowledged", obj, name(i)))
			} else {
				m.goneChecks++
			}
			continue
		case deleting:
			if !ok {
				blobs[i] = absent
				continue
			}
			blobs[i] = present
		}
		if check(i) {
			want = append(want, i)
		}
	}
	var mu sync.Mutex
	var errs []string
	checked := 0
	_ = parallel(len(want), func(k int) error {
		i := want[k]
		r, err := cc.NewBlobClient(name(i)).DownloadStream(ctx, nil)
		var got []byte
		if err == nil {
			got, err = io.ReadAll(r.Body)
			r.Body.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("%s/%s: protected, read: %v", obj, name(i), err))
		case !bytes.Equal(got, blobBody(obj, i)):
			errs = append(errs, fmt.Sprintf("%s/%s: protected, its content changed (%d bytes, want %d)", obj, name(i), len(got), len(blobBody(obj, i))))
		default:
			checked++
			if props != nil {
				props(i, r)
			}
		}
		return nil
	})
	m.errs = append(m.errs, errs...)
	m.protectChecks += checked
}

// cwVerify checks o after a restart (m.mu held).
func (m *wormModel) cwVerify(ctx context.Context, cl *wormClients, o *cwObj) {
	if o.gone {
		return
	}
	bad := func(format string, args ...any) { m.errs = append(m.errs, fmt.Sprintf(format, args...)) }
	cc := cl.flat.ServiceClient().NewContainerClient(o.name)
	props, err := cc.GetProperties(ctx, nil)
	if err != nil {
		st, code, _ := answer(err)
		switch {
		case st != http.StatusNotFound || code != "ContainerNotFound":
			bad("container %s: Get Container Properties: %v", o.name, err)
		case o.cont == absent:
			m.goneChecks++
			o.gone = true
		case o.cont == deleting:
			o.cont, o.gone = absent, true
		default:
			bad("container %s (%s): gone, though no delete of it was acknowledged", o.name, cwKindName[o.kind])
		}
		return
	}
	if o.cont == absent {
		bad("container %s: there after its delete was acknowledged", o.name)
		return
	}
	o.cont = present // a delete without answer that did not happen
	on := o.protected == present && o.released == absent
	off := o.released == present
	hold := props.HasLegalHold != nil && *props.HasLegalHold
	pol := props.HasImmutabilityPolicy != nil && *props.HasImmutabilityPolicy
	if o.kind == cwHold {
		pol, hold = hold, pol // the setting of its kind first
	}
	switch {
	case on && !pol:
		bad("container %s: its %s was acknowledged, it is gone after the restart", o.name, cwKindName[o.kind])
	case off && pol:
		bad("container %s: its %s was removed (acknowledged), it is back after the restart", o.name, cwKindName[o.kind])
	case hold:
		bad("container %s: reports a setting never set (%s only)", o.name, cwKindName[o.kind])
	}
	if o.kind == cwLocked && on {
		st, code, out, err := cl.adm.do(ctx, wormFlatAcct, http.MethodGet, o.name+"/immutabilityPolicies/default", "", nil)
		if err != nil || st != http.StatusOK {
			bad("container %s: its Locked policy: %d %s %v %v", o.name, st, code, out, err)
		} else if _, st, days := policyOf(out); st != "Locked" || days != wormDays {
			bad("container %s: policy %s %v days after the restart, want Locked %d", o.name, st, days, wormDays)
		}
	}
	// The content of every blob that is or may be protected.
	m.checkBlobs(ctx, cc, o.name, o.n, o.blobs, o.acked, blobName, func(int) bool { return o.protected != absent && o.released != present }, nil)
}

// ---- version-level immutability on the dev account ----

func (m *wormModel) viWorker(cl *wormClients, trial int, rng *rand.Rand, stopped stopFn) {
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		var o *viObj
		m.mu.Lock()
		for _, x := range m.vis {
			if x.phase != phDone {
				o = x
			}
		}
		m.mu.Unlock()
		if o == nil {
			name := fmt.Sprintf("vi-%d-%d", trial, seq)
			n := 150 + rng.IntN(100)
			if _, err := cl.dev.CreateContainer(ctx, name, nil); err != nil {
				cancel()
				return
			}
			o = &viObj{name: name, n: n, acked: make([]bool, n), prot: make([]int, n), protSt: make([]state, n), cleared: make([]state, n)}
			for i := range o.prot {
				o.prot[i] = rng.IntN(3)
			}
			m.mu.Lock()
			m.vis = append(m.vis, o)
			m.mu.Unlock()
		}
		err := m.viRun(ctx, cl, o)
		cancel()
		if err != nil {
			return
		}
	}
}

func (m *wormModel) viRun(ctx context.Context, cl *wormClients, o *viObj) error {
	cc := cl.dev.ServiceClient().NewContainerClient(o.name)
	if o.phase == phFill {
		blobs, err := m.fillBlobs(ctx, cc, o.name, o.acked, o.n)
		if err != nil {
			return err
		}
		m.mu.Lock()
		o.blobs, o.acked, o.phase = blobs, nil, phProtect
		m.mu.Unlock()
	}
	if o.phase == phProtect {
		until := time.Now().Add(wormDays * 24 * time.Hour)
		err := parallel(o.n, func(i int) error {
			m.mu.Lock()
			skip := o.prot[i] == viNone || o.protSt[i] == present
			if !skip {
				o.protSt[i] = unknown
			}
			m.mu.Unlock()
			if skip {
				return nil
			}
			bc := cc.NewBlobClient(blobName(i))
			var err error
			if o.prot[i] == viHold {
				_, err = bc.SetLegalHold(ctx, true, nil)
			} else {
				_, err = bc.SetImmutabilityPolicy(ctx, until, nil)
			}
			if err := m.ok(err, "protect "+o.name+"/"+blobName(i)); err != nil {
				return err
			}
			m.setState(&o.protSt[i], present)
			return nil
		})
		if err != nil {
			return err
		}
		m.mu.Lock()
		o.phase = phRefuse
		m.mu.Unlock()
	}
	if o.phase == phRefuse {
		// Every blob's delete, refused or not, and the container's.
		err := parallel(o.n+1, func(i int) error {
			if i == o.n {
				_, err := cc.Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, "ContainerImmutableStorageWithVersioningEnabled", "Delete Container "+o.name+" (version-level immutability)")
			}
			bc := cc.NewBlobClient(blobName(i))
			switch o.prot[i] {
			case viHold:
				_, err := bc.Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, "BlobImmutableDueToLegalHold", "Delete Blob "+o.name+"/"+blobName(i)+" (legal hold)")
			case viPolicy:
				_, err := bc.Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, "BlobImmutableDueToPolicy", "Delete Blob "+o.name+"/"+blobName(i)+" (policy)")
			}
			m.mu.Lock()
			st := o.blobs[i]
			o.blobs[i] = deleting
			m.mu.Unlock()
			if st == absent {
				m.setState(&o.blobs[i], absent)
				return nil
			}
			_, err := bc.Delete(ctx, nil)
			return m.deleted(err, st, &o.blobs[i], "BlobNotFound", &m.blobDeletes, "Delete Blob "+o.name+"/"+blobName(i)+" (unprotected)")
		})
		if err != nil {
			return err
		}
		m.mu.Lock()
		o.phase = phRelease
		m.mu.Unlock()
	}
	if o.phase == phRelease {
		err := parallel(o.n, func(i int) error {
			m.mu.Lock()
			skip := o.prot[i] != viHold || o.cleared[i] == present
			if !skip {
				o.cleared[i] = unknown
			}
			m.mu.Unlock()
			if skip {
				return nil
			}
			_, err := cc.NewBlobClient(blobName(i)).SetLegalHold(ctx, false, nil)
			if err := m.ok(err, "clear the legal hold of "+o.name+"/"+blobName(i)); err != nil {
				return err
			}
			m.setState(&o.cleared[i], present)
			return nil
		})
		if err != nil {
			return err
		}
		m.mu.Lock()
		o.phase = phDelete
		m.mu.Unlock()
	}
	if o.phase == phDelete {
		err := parallel(o.n, func(i int) error {
			m.mu.Lock()
			st := o.blobs[i]
			skip := o.prot[i] != viHold || st == absent
			if !skip {
				o.blobs[i] = deleting
			}
			m.mu.Unlock()
			if skip {
				return nil
			}
			_, err := cc.NewBlobClient(blobName(i)).Delete(ctx, nil)
			return m.deleted(err, st, &o.blobs[i], "BlobNotFound", &m.blobDeletes, "Delete Blob "+o.name+"/"+blobName(i)+" after its hold was cleared")
		})
		if err != nil {
			return err
		}
		m.mu.Lock()
		o.phase = phDone
		m.mu.Unlock()
	}
	return nil
}

// viVerify checks o after a restart (m.mu held).
func (m *wormModel) viVerify(ctx context.Context, cl *wormClients, o *viObj) {
	cc := cl.dev.ServiceClient().NewContainerClient(o.name)
	if _, err := cc.GetProperties(ctx, nil); err != nil {
		m.errs = append(m.errs, fmt.Sprintf("container %s (version-level immutability): %v", o.name, err))
		return
	}
	// Checked: every blob whose protection was or may have been set and
	// not cleared.
	check := func(i int) bool {
		return o.prot[i] != viNone && o.protSt[i] != absent && o.cleared[i] != present
	}
	var mu sync.Mutex
	m.checkBlobs(ctx, cc, o.name, o.n, o.blobs, o.acked, blobName, check, func(i int, r blob.DownloadStreamResponse) {
		if o.protSt[i] != present {
			return
		}
		hold := r.LegalHold != nil && *r.LegalHold
		var msg string
		switch {
		case o.prot[i] == viHold && o.cleared[i] == absent && !hold:
			msg = "its legal hold was acknowledged, it is gone after the restart"
		case o.prot[i] == viPolicy && (r.ImmutabilityPolicyExpiresOn == nil || r.ImmutabilityPolicyExpiresOn.Before(time.Now())):
			msg = fmt.Sprintf("its policy was acknowledged, after the restart it expires %v", r.ImmutabilityPolicyExpiresOn)
		}
		if msg != "" {
			mu.Lock()
			m.errs = append(m.errs, fmt.Sprintf("%s/%s: %s", o.name, blobName(i), msg))
			mu.Unlock()
		}
	})
	// A cleared hold stays cleared on a blob not yet deleted.
	for i := 0; i < o.n && o.blobs != nil; i++ {
		if o.prot[i] != viHold || o.cleared[i] != present || o.blobs[i] != present {
			continue
		}
		p, err := cc.NewBlobClient(blobName(i)).GetProperties(ctx, nil)
		if err != nil {
			m.errs = append(m.errs, fmt.Sprintf("%s/%s: %v", o.name, blobName(i), err))
		} else if p.LegalHold != nil && *p.LegalHold {
			m.errs = append(m.errs, fmt.Sprintf("%s/%s: its hold was cleared (acknowledged), it is back after the restart", o.name, blobName(i)))
		}
	}
}

// ---- recursive deletes on the hierarchical account ----

func (m *wormModel) hnWorker(cl *wormClients, trial int, rng *rand.Rand, stopped stopFn) {
	for seq := 0; !stopped(); seq++ {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		var o *hnObj
		m.mu.Lock()
		for _, x := range m.hns {
			if x.phase != phDone && !x.done {
				o = x
			}
		}
		m.mu.Unlock()
		if o == nil {
			name := fmt.Sprintf("hn-%d-%d", trial, seq)
			n := 120 + rng.IntN(100)
			if _, err := cl.hnsB.CreateContainer(ctx, name, nil); err != nil {
				cancel()
				return
			}
			o = &hnObj{name: name, n: n, acked: make([]bool, n), dir: present}
			m.mu.Lock()
			o.held = len(m.hns)%3 != 2 // two under a hold, one without, in turn
			m.hns = append(m.hns, o)
			m.mu.Unlock()
		}
		err := m.hnRun(ctx, cl, o)
		cancel()
		if err != nil {
			return
		}
	}
}

func (m *wormModel) hnRun(ctx context.Context, cl *wormClients, o *hnObj) error {
	cc := cl.hnsB.ServiceClient().NewContainerClient(o.name)
	fs := cl.hnsD.NewFileSystemClient(o.name)
	if o.phase == phFill {
		if err := fillAcked(&m.mu, o.acked, o.n, func(i int) error {
			_, err := cc.NewBlockBlobClient(hnFile(i)).UploadBuffer(ctx, blobBody(o.name, i), nil)
			return err
		}); err != nil {
			return err
		}
		if !o.eMade {
			for _, d := range []string{"e/x", "e/y"} {
				_, err := fs.NewDirectoryClient(d).Create(ctx, nil)
				if err := m.ok(err, "Path - Create "+o.name+"/"+d); err != nil {
					return err
				}
			}
			_, err := cc.NewBlockBlobClient("e/one").UploadBuffer(ctx, blobBody(o.name, eIdx), nil)
			if err := m.ok(err, "Put Blob "+o.name+"/e/one"); err != nil {
				return err
			}
			m.mu.Lock()
			o.eMade, o.eDir = true, present
			m.mu.Unlock()
		}
		m.mu.Lock()
		o.acked, o.phase = nil, phProtect
		if !o.held {
			o.phase = phDelete
		}
		m.mu.Unlock()
	}
	if o.phase == phProtect {
		m.setState(&o.protected, unknown)
		if _, err := m.admOK(ctx, cl, wormHNSAcct, http.MethodPost, o.name+"/setLegalHold", "", holdBody()); err != nil {
			return err
		}
		m.mu.Lock()
		o.protected, o.phase = present, phRefuse
		m.mu.Unlock()
	}
	if o.phase == phRefuse {
		const code = "BlobImmutableDueToLegalHold"
		// The whole tree, a subdirectory, a file (Data Lake and Blob
		// API) and the filesystem, at once.
		reqs := []func() error{
			func() error {
				_, err := fs.NewDirectoryClient("d").Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, code, "recursive Path - Delete "+o.name+"/d (legal hold)")
			},
			func() error {
				// e holds one file (protected) and two empty directories.
				_, err := fs.NewDirectoryClient("e").Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, code, "recursive Path - Delete "+o.name+"/e (legal hold)")
			},
			func() error {
				_, err := fs.NewDirectoryClient("d/s1").Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, code, "recursive Path - Delete "+o.name+"/d/s1 (legal hold)")
			},
			func() error {
				_, err := fs.NewFileClient(hnFile(0)).Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, code, "Path - Delete "+o.name+"/"+hnFile(0)+" (legal hold)")
			},
			func() error {
				_, err := cc.NewBlobClient(hnFile(1)).Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, code, "Delete Blob "+o.name+"/"+hnFile(1)+" (legal hold)")
			},
			func() error {
				_, err := cc.Delete(ctx, nil)
				return m.refusal(err, http.StatusConflict, "ContainerHasLegalHold", "Delete Container "+o.name+" (legal hold)")
			},
		}
		if err := parallel(len(reqs), func(i int) error { return reqs[i]() }); err != nil {
			return err
		}
		m.mu.Lock()
		o.phase = phRelease
		m.mu.Unlock()
	}
	if o.phase == phRelease {
		m.setState(&o.released, unknown)
		if _, err := m.admOK(ctx, cl, wormHNSAcct, http.MethodPost, o.name+"/clearLegalHold", "", holdBody()); err != nil {
			return err
		}
		m.mu.Lock()
		o.released, o.phase = present, phDelete
		m.mu.Unlock()
	}
	if o.phase == phDelete {
		m.mu.Lock()
		est := o.eDir
		if est != absent {
			o.eDir = deleting
		}
		m.mu.Unlock()
		if est != absent {
			_, err := fs.NewDirectoryClient("e").Delete(ctx, nil)
			if err := m.deleted(err, est, &o.eDir, "PathNotFound", &m.dirDeletes, "recursive Path - Delete "+o.name+"/e"); err != nil {
				return err
			}
		}
		m.mu.Lock()
		st := o.dir
		o.dir = deleting
		m.mu.Unlock()
		_, err := fs.NewDirectoryClient("d").Delete(ctx, nil)
		if err := m.deleted(err, st, &o.dir, "PathNotFound", &m.dirDeletes, "recursive Path - Delete "+o.name+"/d"); err != nil {
			return err
		}
		m.mu.Lock()
		o.phase = phDone
		m.mu.Unlock()
	}
	return nil
}

// hnVerify checks o after a restart (m.mu held).
func (m *wormModel) hnVerify(ctx context.Context, cl *wormClients, o *hnObj) {
	if o.done {
		return
	}
	bad := func(format string, args ...any) { m.errs = append(m.errs, fmt.Sprintf(format, args...)) }
	cc := cl.hnsB.ServiceClient().NewContainerClient(o.name)
	props, err := cc.GetProperties(ctx, nil)
	if err != nil {
		bad("filesystem %s: %v", o.name, err)
		return
	}
	hold := props.HasLegalHold != nil && *props.HasLegalHold
	if o.protected == present && o.released == absent && !hold {
		bad("filesystem %s: its legal hold was acknowledged, it is gone after the restart", o.name)
	}
	if (o.released == present || !o.held) && hold {
		bad("filesystem %s: a legal hold after the restart, though none is set (or its clearing was acknowledged)", o.name)
	}
	files := map[string]bool{}
	paths := map[string]bool{}
	dirD := false
	pg := cl.hnsD.NewFileSystemClient(o.name).NewListPathsPager(true, nil)
	for pg.More() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			bad("filesystem %s: list paths: %v", o.name, err)
			return
		}
		for _, p := range page.Paths {
			if *p.Name == "d" {
				dirD = true
			}
			paths[*p.Name] = true
			if p.IsDirectory == nil || !*p.IsDirectory {
				files[*p.Name] = true
			}
		}
	}
	got := 0
	for i := 0; i < o.n; i++ {
		if files[hnFile(i)] {
			got++
		}
	}
	// e: all four paths or none.
	if o.eMade {
		k := 0
		for _, p := range hnE {
			if paths[p] {
				k++
			}
		}
		switch {
		case o.eDir == absent && k > 0:
			bad("%s/e: its recursive delete was acknowledged, yet %d of its %d paths are there", o.name, k, len(hnE))
		case o.eDir == deleting && k == 0:
			o.eDir = absent
		case o.eDir != absent && k != len(hnE):
			bad("%s/e: %d of its %d paths after the restart, though no recursive delete of it was acknowledged: a refused or unanswered delete leaves it whole", o.name, k, len(hnE))
		case k == len(hnE):
			o.eDir = present
			if o.protected != absent && o.released != present {
				r, err := cc.NewBlobClient("e/one").DownloadStream(ctx, nil)
				var b []byte
				if err == nil {
					b, err = io.ReadAll(r.Body)
					r.Body.Close()
				}
				if err != nil || !bytes.Equal(b, blobBody(o.name, eIdx)) {
					bad("%s/e/one: under a legal hold, read %d bytes, %v", o.name, len(b), err)
				} else {
					m.protectChecks++
				}
			}
		}
	}
	eGone := !o.eMade || o.eDir == absent
	if o.phase == phFill {
		for i := 0; i < o.n; i++ {
			if o.acked[i] && !files[hnFile(i)] {
				bad("%s/%s: its upload was acknowledged, it is gone", o.name, hnFile(i))
			}
		}
		return
	}
	switch {
	case o.dir == absent && (got > 0 || dirD):
		bad("%s/d: its recursive delete was acknowledged, yet d is there (%v) with %d of its %d files", o.name, dirD, got, o.n)
	case o.dir == absent:
		m.goneChecks++
		o.done = eGone
	case got == 0 && !dirD && o.dir == deleting:
		o.dir, o.done = absent, eGone // the delete without answer went through, whole
	case got != o.n || !dirD:
		bad("%s/d: %d of its %d files after the restart (directory listed: %v), though no recursive delete of it was acknowledged: a refused or unanswered delete leaves it whole", o.name, got, o.n, dirD)
	default:
		o.dir = present
		if o.protected != absent && o.released != present {
			// Under the hold (or maybe): every file byte for byte.
			var want []int
			for i := 0; i < o.n; i++ {
				want = append(want, i)
			}
			var mu sync.Mutex
			checked := 0
			_ = parallel(len(want), func(i int) error {
				r, err := cc.NewBlobClient(hnFile(i)).DownloadStream(ctx, nil)
				var b []byte
				if err == nil {
					b, err = io.ReadAll(r.Body)
					r.Body.Close()
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil || !bytes.Equal(b, blobBody(o.name, i)) {
					m.errs = append(m.errs, fmt.Sprintf("%s/%s: under a legal hold, read %d bytes, %v", o.name, hnFile(i), len(b), err))
				} else {
					checked++
				}
				return nil
			})
			m.protectChecks += checked
		}
	}
}

// TestWORMDeleteCrashTrials: see the comment at the top. It runs with the
// crash trials (CERULEAN_CRASH_TRIALS), on a server of its own on the
// five ports after the container soft delete trials' (Blob, Queue, Table,
// File, dfs).
func TestWORMDeleteCrashTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: crash trials run real servers")
	}
	trials, port := trialSetup(t, 8) // after the main trials' four ports and the soft delete trials' four
	dfsPort := port + 4
	accounts := strings.Join([]string{
		app.DevAccount + ":" + app.DevKey + ":versioning:immutability",
		wormFlatAcct + ":" + app.DevKey,
		wormHNSAcct + ":" + app.DevKey + ":hns",
	}, ";")
	srv := &server{bin: buildBinary(t), data: filepath.Join(t.TempDir(), "data"), log: filepath.Join(t.TempDir(), "cerulean.log"), port: port,
		extra: []string{"--accounts", accounts, "--dfs-port", strconv.Itoa(dfsPort)}}
	backend := "embedded store"
	// The load runs 1 to 4 s before the kill; PostgreSQL's round trips
	// make each write slower, so it gets three times as long to bring
	// its objects as far.
	loadScale := 1
	if os.Getenv(pgtest.EnvVar) != "" {
		srv.dsn, _ = pgtest.Schema(t)
		backend = "PostgreSQL backend"
		loadScale = 3
	}
	t.Cleanup(func() {
		srv.stop(t)
		if t.Failed() {
			t.Logf("server log (last lines):\n%s", tail(srv.log, 40))
		}
	})
	start := func() {
		srv.start(t)
		// start waited for the four ports it knows; the dfs port too.
		deadline := time.Now().Add(30 * time.Second)
		for {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/%s", dfsPort, wormHNSAcct))
			if err == nil {
				resp.Body.Close()
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("dfs port %d not answering: %v", dfsPort, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	start()
	m := &wormModel{}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 4))
	began := time.Now()
	for trial := 1; trial <= trials && len(m.errs) == 0; trial++ {
		cl := newWORMClients(t, port, dfsPort)
		stop := make(chan struct{})
		stopped := func() bool {
			select {
			case <-stop:
				return true
			default:
				return false
			}
		}
		var wg sync.WaitGroup
		workers := []func(r *rand.Rand){
			func(r *rand.Rand) { m.cwWorker(cl, 0, trial, r, stopped) },
			func(r *rand.Rand) { m.cwWorker(cl, 1, trial, r, stopped) },
			func(r *rand.Rand) { m.viWorker(cl, trial, r, stopped) },
			func(r *rand.Rand) { m.hnWorker(cl, trial, r, stopped) },
		}
		for _, w := range workers {
			wg.Add(1)
			wr := rand.New(rand.NewPCG(rng.Uint64(), 5))
			go func() {
				defer wg.Done()
				w(wr)
			}()
		}
		d := time.Duration(loadScale*(1000+rng.IntN(3000))) * time.Millisecond
		time.Sleep(d)
		close(stop)
		srv.kill()
		wg.Wait()
		cl.tr.CloseIdleConnections()
		start()
		cl = newWORMClients(t, port, dfsPort)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		m.mu.Lock()
		for _, o := range m.cws {
			m.cwVerify(ctx, cl, o)
		}
		for _, o := range m.vis {
			m.viVerify(ctx, cl, o)
		}
		for _, o := range m.hns {
			m.hnVerify(ctx, cl, o)
		}
		m.mu.Unlock()
		cancel()
		cl.tr.CloseIdleConnections()
		t.Logf("trial %d: killed after %v; restarted and verified", trial, d)
	}
	for i, e := range m.errs {
		if i == 30 {
			t.Errorf("... and %d more", len(m.errs)-30)
			break
		}
		t.Error(e)
	}
	kinds := [3]int{}
	for _, o := range m.cws {
		if o.phase > phProtect {
			kinds[o.kind]++
		}
	}
	viProt, held := 0, 0
	for _, o := range m.vis {
		for i := range o.protSt {
			if o.protSt[i] == present {
				viProt++
			}
		}
	}
	for _, o := range m.hns {
		if o.protected == present {
			held++
		}
	}
	t.Logf("WORM delete crash trials on the %s, seed %d, %v: containers protected at the container level: %d under a legal hold, %d an Unlocked policy, %d a Locked policy (of %d made); "+
		"%d versioned containers with %d blobs protected at the version level; %d filesystems (%d under a legal hold); "+
		"%d deletes refused as they must be; acknowledged deletes that had to succeed: %d blobs, %d containers, %d directories (recursive); %d requests without answer; "+
		"after the restarts %d protected blobs read back whole and %d acknowledged deletes found gone; violations: %d",
		backend, seed, time.Since(began).Round(time.Second), kinds[cwHold], kinds[cwUnlocked], kinds[cwLocked], len(m.cws),
		len(m.vis), viProt, len(m.hns), held,
		m.refused, m.blobDeletes, m.contDeletes, m.dirDeletes, m.unknowns,
		m.protectChecks, m.goneChecks, len(m.errs))
}
