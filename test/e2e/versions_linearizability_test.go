package e2e

import (
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/anishathalye/porcupine"
)

// verOp is one operation on a versioned blob: a Put Blob (conditional on
// IfMatch when set), a Get Blob of the current version, or a Get Blob of
// version ID.
type verOp struct {
	blob    string
	kind    string // "put", "get", "getv"
	body    string // put
	ifMatch string // put: If-Match ("" none)
	id      string // getv
}

// verOut is what the operation answered.
type verOut struct {
	ok   bool   // put: acknowledged (false: 412); getv: found
	id   string // put, get: the version id
	etag string // put, get
	body string // get, getv
}

// verState is one blob as the model sees it: the current version and its
// ETag, and every version's body as "|id=body|" entries (a string, so
// states compare with ==).
type verState struct {
	cur, etag, bodies string
}

func (s verState) has(id, body string) bool { return strings.Contains(s.bodies, "|"+id+"="+body+"|") }
func (s verState) known(id string) bool     { return strings.Contains(s.bodies, "|"+id+"=") }

// versionModel: every acknowledged Put makes a new version whose id is
// greater than every earlier one and which reads back its body for good;
// a conditional Put succeeds exactly when its ETag is the current one;
// a Get returns the current version.
var versionModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var names []string
		for _, op := range history {
			b := op.Input.(verOp).blob
			if _, ok := by[b]; !ok {
				names = append(names, b)
			}
			by[b] = append(by[b], op)
		}
		var out [][]porcupine.Operation
		for _, n := range names {
			out = append(out, by[n])
		}
		return out
	},
	Init: func() any { return verState{bodies: "|"} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(verState), input.(verOp), output.(verOut)
		switch in.kind {
		case "put":
			if !out.ok {
				return in.ifMatch != "" && in.ifMatch != s.etag, s
			}
			if (in.ifMatch != "" && in.ifMatch != s.etag) || out.id <= s.cur || s.known(out.id) {
				return false, s
			}
			return true, verState{cur: out.id, etag: out.etag, bodies: s.bodies + out.id + "=" + in.body + "|"}
		case "get":
			return out.id == s.cur && out.etag == s.etag && s.has(out.id, out.body), s
		default: // getv
			if !out.ok {
				return !s.known(in.id), s
			}
			return s.has(in.id, out.body), s
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(verOp), output.(verOut)
		return fmt.Sprintf("%s %s %s%s%s → %+v", in.blob, in.kind, in.body, in.ifMatch, in.id, out)
	},
}

// TestVersioningLinearizable: clients putting (some conditionally on the
// ETag they last saw), reading the current version and reading versions
// by id, on two blobs at once through the SDK: the history is
// linearizable against versionModel (porcupine), so every acknowledged
// version stays readable with its body and ids strictly increase per
// blob.
func TestVersioningLinearizable(t *testing.T) {
	e := startVersioning(t)
	e.container("vlin")
	cc := e.c.ServiceClient().NewContainerClient("vlin")
	start := time.Now()
	var mu sync.Mutex
	var history []porcupine.Operation
	ids := map[string][]string{} // acknowledged version ids per blob
	record := func(client int, in verOp, call time.Time, out verOut) {
		mu.Lock()
		defer mu.Unlock()
		history = append(history, porcupine.Operation{ClientId: client, Input: in, Output: out,
			Call: call.Sub(start).Nanoseconds(), Return: time.Since(start).Nanoseconds()})
		if in.kind == "put" && out.ok {
			ids[in.blob] = append(ids[in.blob], out.id)
		}
	}
	blobs := []string{"x", "y"}
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(c)))
			seen := map[string]string{} // the ETag this client last saw per blob
			for i := range 30 {
				name := blobs[rng.Intn(len(blobs))]
				bb := cc.NewBlockBlobClient(name)
				call := time.Now()
				switch k := rng.Intn(4); {
				case k <= 1 || seen[name] == "":
					in := verOp{blob: name, kind: "put", body: fmt.Sprintf("c%d-%d", c, i)}
					opts := &blockblob.UploadOptions{}
					if k == 1 && seen[name] != "" {
						in.ifMatch = seen[name]
						opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: to.Ptr(azcore.ETag(in.ifMatch))}}
					}
					r, err := bb.Upload(e.ctx, streamOf(in.body), opts)
					switch code := errCode(err); code {
					case "":
						seen[name] = string(*r.ETag)
						record(c, in, call, verOut{ok: true, id: *r.VersionID, etag: string(*r.ETag)})
					case "412 ConditionNotMet":
						record(c, in, call, verOut{})
					default:
						t.Errorf("put: %s", code)
						return
					}
				case k == 2:
					r, err := bb.DownloadStream(e.ctx, nil)
					if err != nil {
						t.Error(err)
						return
					}
					body, err := io.ReadAll(r.Body)
					r.Body.Close()
					if err != nil {
						t.Error(err)
						return
					}
					seen[name] = string(*r.ETag)
					record(c, verOp{blob: name, kind: "get"}, call, verOut{id: *r.VersionID, etag: string(*r.ETag), body: string(body)})
				default:
					mu.Lock()
					known := ids[name]
					id := "2001-01-01T00:00:00.0000000Z" // never a version: must not be found
					if len(known) > 0 && rng.Intn(5) > 0 {
						id = known[rng.Intn(len(known))]
					}
					mu.Unlock()
					in := verOp{blob: name, kind: "getv", id: id}
					vc, err := bb.WithVersionID(id)
					if err != nil {
						t.Error(err)
						return
					}
					r, err := vc.DownloadStream(e.ctx, nil)
					if errCode(err) == fmt.Sprintf("%d BlobNotFound", http.StatusNotFound) {
						record(c, in, call, verOut{})
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					body, err := io.ReadAll(r.Body)
					r.Body.Close()
					if err != nil {
						t.Error(err)
						return
					}
					record(c, in, call, verOut{ok: true, body: string(body)})
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	res, _ := porcupine.CheckOperationsVerbose(versionModel, history, 60*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable (%v)", len(history), res)
	}
	t.Logf("%d operations linearizable, %d and %d versions", len(history), len(ids["x"]), len(ids["y"]))
}
