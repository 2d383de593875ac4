package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	bsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	blobservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	fsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	fileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	qsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// fidSASRow is one line of the permission tables of "Create an account
// SAS" ("Permissions by operation") and "Create a service SAS": an
// operation, the kind of SAS, its signed resource type (srt, account
// SAS) or signed resource (sr, service SAS: c container, b blob, s
// share, f file, q queue, t table), the permission letters and whether
// the service allows it.
type fidSASRow struct {
	op    string
	kind  string // "account" or "service"
	res   string
	perms string
	allow bool
}

// Letters a token of each kind may carry, per service: a denial row
// grants every one of them except those the operation takes.
var fidSASLetters = map[string]string{
	"account/blob": "rwdlact", "account/queue": "rwdlacup", "account/table": "rwdlacup", "account/file": "rwdlc",
	"service/blob/c": "racwdlt", "service/blob/b": "racwdt", "service/queue/q": "raup", "service/table/t": "raud",
	"service/file/s": "rcwdl", "service/file/f": "rcwd",
}

func fidWithout(all, need string) string {
	var b strings.Builder
	for _, l := range all {
		if !strings.ContainsRune(need, l) {
			b.WriteRune(l)
		}
	}
	return b.String()
}

// fidAccount expands "op takes any one of the letters need at srt" into
// rows: each letter alone is allowed; every other letter together is
// refused; the letters at the other resource types are refused.
func fidAccount(svc, op, srt, need string) []fidSASRow {
	all := fidSASLetters["account/"+svc]
	rows := []fidSASRow{{op, "account", srt, fidWithout(all, need), false}, {op, "account", fidWithout("sco", srt), need, false}}
	for _, l := range need {
		rows = append(rows, fidSASRow{op, "account", srt, string(l), true})
	}
	return rows
}

// fidService is fidAccount for a service SAS for signed resource sr;
// need "" means no service SAS reaches the operation (all letters are
// refused).
func fidService(svc, op, sr, need string) []fidSASRow {
	all := fidSASLetters["service/"+svc+"/"+sr]
	if need == "" {
		return []fidSASRow{{op, "service", sr, all, false}}
	}
	rows := []fidSASRow{{op, "service", sr, fidWithout(all, need), false}}
	for _, l := range need {
		rows = append(rows, fidSASRow{op, "service", sr, string(l), true})
	}
	return rows
}

func fidRows(parts ...[]fidSASRow) []fidSASRow {
	var out []fidSASRow
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// fidSASOp is an operation of the table: prep makes what the i-th
// attempt needs with Shared Key and returns the container (queue, table,
// share) and path it addresses, which a service SAS is signed for; run
// makes the request with the SAS token tok.
type fidSASOp struct {
	svc  string
	prep func(t *testing.T, i int) (cont, path string)
	run  func(ctx context.Context, tok, cont, path string) error
}

// TestFidSvcSASPermissionTable walks the account SAS and service SAS
// permission tables of the REST reference (Create an account SAS,
// "Permissions by operation"; Create a service SAS, "Permissions for a
// directory, container, or blob", "Permissions for a file", "Permissions
// for a share", "Permissions for a queue", "Permissions for a table")
// for the operations of Blob, Queue, Table and File, through real
// requests made by the SDKs with the token: an allowed row succeeds, a
// refused one is 403.
func TestFidSvcSASPermissionTable(t *testing.T) {
	a, _ := startApp4(t, 0, 0, 0, 0)
	ctx := context.Background()
	var seq atomic.Int64
	uniq := func(p string) string { return fmt.Sprintf("%s%d", p, seq.Add(1)) }
	exp := time.Now().Add(time.Hour)

	// Shared Key clients for the fixtures.
	bc := client(t, a.BlobURL, app.DevKey)
	qc := quClient(t, a.QueueURL, app.DevKey)
	tc := tbService(t, a.TableURL, app.DevKey)
	fc := fileClient(t, a.FileURL, app.DevKey)
	const cont, queue, table, shr = "fidsas", "fidsas", "fidsas", "fidsas"
	_, err := bc.CreateContainer(ctx, cont, nil)
	must(t, err)
	_, err = bc.UploadBuffer(ctx, cont, "seed", []byte("seed data"), nil)
	must(t, err)
	_, err = qc.CreateQueue(ctx, queue, nil)
	must(t, err)
	_, err = tc.CreateTable(ctx, table, nil)
	must(t, err)
	_, err = tc.NewClient(table).AddEntity(ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "seed", "V": 1}), nil)
	must(t, err)
	_, err = fc.NewShareClient(shr).Create(ctx, nil)
	must(t, err)
	_, err = fc.NewShareClient(shr).NewRootDirectoryClient().NewFileClient("seed").Create(ctx, 16, nil)
	must(t, err)

	// Clients made from a token.
	blobSvc := func(tok string) *azblob.Client {
		c, err := azblob.NewClientWithNoCredential(a.BlobURL+"?"+tok, clientOptions())
		must(t, err)
		return c
	}
	blobCont := func(tok, name string) *container.Client {
		return blobSvc(tok).ServiceClient().NewContainerClient(name)
	}
	queueSvc := func(tok string) *azqueue.ServiceClient {
		c, err := azqueue.NewServiceClientWithNoCredential(a.QueueURL+"?"+tok, quClientOptions())
		must(t, err)
		return c
	}
	tableSvc := func(tok string) *aztables.ServiceClient {
		c, err := aztables.NewServiceClientWithNoCredential(a.TableURL+"?"+tok, tbOptions())
		must(t, err)
		return c
	}
	fileSvc := func(tok string) *fileservice.Client {
		c, err := fileservice.NewClientWithNoCredential(a.FileURL+"?"+tok, fileClientOptions())
		must(t, err)
		return c
	}
	fileShare := func(tok, name string) *share.Client { return fileSvc(tok).NewShareClient(name) }
	body := func(s string) io.ReadSeekCloser { return streaming.NopCloser(bytes.NewReader([]byte(s))) }
	ignore2 := func(_ any, err error) error { return err }

	fixed := func(c, p string) func(*testing.T, int) (string, string) {
		return func(*testing.T, int) (string, string) { return c, p }
	}
	newBlob := func(t *testing.T, _ int) (string, string) {
		name := uniq("b")
		_, err := bc.UploadBuffer(ctx, cont, name, []byte("x"), nil)
		must(t, err)
		return cont, name
	}
	newContainer := func(t *testing.T, _ int) (string, string) {
		name := uniq("fidc")
		_, err := bc.CreateContainer(ctx, name, nil)
		must(t, err)
		return name, ""
	}
	// A blob and a container with an active lease, taken with Shared Key.
	leasedBlob := func(t *testing.T, i int) (string, string) {
		c, name := newBlob(t, i)
		lc, err := lease.NewBlobClient(bc.ServiceClient().NewContainerClient(c).NewBlobClient(name), nil)
		must(t, err)
		_, err = lc.AcquireLease(ctx, 60, nil)
		must(t, err)
		return c, name
	}
	leasedContainer := func(t *testing.T, i int) (string, string) {
		c, _ := newContainer(t, i)
		lc, err := lease.NewContainerClient(bc.ServiceClient().NewContainerClient(c), nil)
		must(t, err)
		_, err = lc.AcquireLease(ctx, 60, nil)
		must(t, err)
		return c, ""
	}
	newQueue := func(t *testing.T, _ int) (string, string) {
		name := uniq("fidq")
		_, err := qc.CreateQueue(ctx, name, nil)
		must(t, err)
		return name, ""
	}
	// A dequeued message: path is "id receipt".
	newReceipt := func(t *testing.T, _ int) (string, string) {
		q := qc.NewQueueClient(queue)
		_, err := q.EnqueueMessage(ctx, "m", nil)
		must(t, err)
		got, err := q.DequeueMessage(ctx, nil)
		must(t, err)
		return queue, *got.Messages[0].MessageID + " " + *got.Messages[0].PopReceipt
	}
	newEntity := func(t *testing.T, _ int) (string, string) {
		rk := uniq("e")
		_, err := tc.NewClient(table).AddEntity(ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": rk}), nil)
		must(t, err)
		return table, rk
	}
	newFile := func(t *testing.T, _ int) (string, string) {
		name := uniq("f")
		_, err := fc.NewShareClient(shr).NewRootDirectoryClient().NewFileClient(name).Create(ctx, 4, nil)
		must(t, err)
		return shr, name
	}
	// A copy source readable with its own SAS, as the copy needs.
	srcQP, err := bsas.BlobSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: "r", ContainerName: cont, BlobName: "seed"}.SignWithSharedKey(fidBlobCred(t))
	must(t, err)
	srcURL := a.BlobURL + "/" + cont + "/seed?" + srcQP.Encode()
	fsrcQP, err := fsas.SignatureValues{Protocol: fsas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: "r", ShareName: shr, FilePath: "seed"}.SignWithSharedKey(fidFileCred(t))
	must(t, err)
	fileSrcURL := a.FileURL + "/" + shr + "/seed?" + fsrcQP.Encode()

	ops := map[string]fidSASOp{
		// Blob service.
		"listContainers": {"blob", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(blobSvc(tok).NewListContainersPager(nil).NextPage(ctx))
		}},
		"getBlobServiceProperties": {"blob", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(blobSvc(tok).ServiceClient().GetProperties(ctx, nil))
		}},
		"setBlobServiceProperties": {"blob", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(blobSvc(tok).ServiceClient().SetProperties(ctx, &blobservice.SetPropertiesOptions{DefaultServiceVersion: to.Ptr("2020-10-02")}))
		}},
		"createContainer": {"blob", func(*testing.T, int) (string, string) { return uniq("fidn"), "" }, func(ctx context.Context, tok, c, _ string) error {
			return ignore2(blobCont(tok, c).Create(ctx, nil))
		}},
		"getContainerProperties": {"blob", fixed(cont, ""), func(ctx context.Context, tok, c, _ string) error {
			return ignore2(blobCont(tok, c).GetProperties(ctx, nil))
		}},
		"setContainerMetadata": {"blob", fixed(cont, ""), func(ctx context.Context, tok, c, _ string) error {
			return ignore2(blobCont(tok, c).SetMetadata(ctx, &container.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}}))
		}},
		"deleteContainer": {"blob", newContainer, func(ctx context.Context, tok, c, _ string) error {
			return ignore2(blobCont(tok, c).Delete(ctx, nil))
		}},
		"getContainerACL": {"blob", fixed(cont, ""), func(ctx context.Context, tok, c, _ string) error {
			return ignore2(blobCont(tok, c).GetAccessPolicy(ctx, nil))
		}},
		"listBlobs": {"blob", fixed(cont, ""), func(ctx context.Context, tok, c, _ string) error {
			return ignore2(blobCont(tok, c).NewListBlobsFlatPager(nil).NextPage(ctx))
		}},
		"putBlobNew": {"blob", func(*testing.T, int) (string, string) { return cont, uniq("n") }, func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewBlockBlobClient(p).Upload(ctx, body("new"), nil))
		}},
		"putBlobOverwrite": {"blob", newBlob, func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewBlockBlobClient(p).Upload(ctx, body("again"), nil))
		}},
		"copyBlobOverwrite": {"blob", newBlob, func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewBlobClient(p).StartCopyFromURL(ctx, srcURL, nil))
		}},
		"getBlob": {"blob", fixed(cont, "seed"), func(ctx context.Context, tok, c, p string) error {
			r, err := blobCont(tok, c).NewBlobClient(p).DownloadStream(ctx, nil)
			if err == nil {
				_, err = io.ReadAll(r.Body)
				r.Body.Close()
			}
			return err
		}},
		"getBlobProperties": {"blob", fixed(cont, "seed"), func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewBlobClient(p).GetProperties(ctx, nil))
		}},
		"setBlobMetadata": {"blob", newBlob, func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewBlobClient(p).SetMetadata(ctx, map[string]*string{"k": to.Ptr("v")}, nil))
		}},
		"deleteBlob": {"blob", newBlob, func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewBlobClient(p).Delete(ctx, nil))
		}},
		"snapshotBlob": {"blob", newBlob, func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewBlobClient(p).CreateSnapshot(ctx, nil))
		}},
		"copyBlobToNew": {"blob", func(*testing.T, int) (string, string) { return cont, uniq("cp") }, func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewBlobClient(p).StartCopyFromURL(ctx, srcURL, nil))
		}},
		"appendBlock": {"blob", func(t *testing.T, _ int) (string, string) {
			name := uniq("ap")
			_, err := bc.ServiceClient().NewContainerClient(cont).NewAppendBlobClient(name).Create(ctx, nil)
			must(t, err)
			return cont, name
		}, func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewAppendBlobClient(p).AppendBlock(ctx, body("more"), nil))
		}},
		"getBlobTags": {"blob", fixed(cont, "seed"), func(ctx context.Context, tok, c, p string) error {
			return ignore2(blobCont(tok, c).NewBlobClient(p).GetTags(ctx, nil))
		}},
		"acquireBlobLease": {"blob", newBlob, func(ctx context.Context, tok, c, p string) error {
			lc, err := lease.NewBlobClient(blobCont(tok, c).NewBlobClient(p), nil)
			must(t, err)
			return ignore2(lc.AcquireLease(ctx, 15, nil))
		}},
		"breakBlobLease": {"blob", leasedBlob, func(ctx context.Context, tok, c, p string) error {
			lc, err := lease.NewBlobClient(blobCont(tok, c).NewBlobClient(p), nil)
			must(t, err)
			return ignore2(lc.BreakLease(ctx, nil))
		}},
		"acquireContainerLease": {"blob", newContainer, func(ctx context.Context, tok, c, _ string) error {
			lc, err := lease.NewContainerClient(blobCont(tok, c), nil)
			must(t, err)
			return ignore2(lc.AcquireLease(ctx, 15, nil))
		}},
		"breakContainerLease": {"blob", leasedContainer, func(ctx context.Context, tok, c, _ string) error {
			lc, err := lease.NewContainerClient(blobCont(tok, c), nil)
			must(t, err)
			return ignore2(lc.BreakLease(ctx, nil))
		}},

		// Queue service.
		"listQueues": {"queue", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(queueSvc(tok).NewListQueuesPager(nil).NextPage(ctx))
		}},
		"getQueueServiceProperties": {"queue", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(queueSvc(tok).GetServiceProperties(ctx, nil))
		}},
		"setQueueServiceProperties": {"queue", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(queueSvc(tok).SetProperties(ctx, &azqueue.SetPropertiesOptions{CORS: []*azqueue.CORSRule{}}))
		}},
		"createQueue": {"queue", func(*testing.T, int) (string, string) { return uniq("fidn"), "" }, func(ctx context.Context, tok, q, _ string) error {
			return ignore2(queueSvc(tok).CreateQueue(ctx, q, nil))
		}},
		"deleteQueue": {"queue", newQueue, func(ctx context.Context, tok, q, _ string) error {
			return ignore2(queueSvc(tok).DeleteQueue(ctx, q, nil))
		}},
		"getQueueMetadata": {"queue", fixed(queue, ""), func(ctx context.Context, tok, q, _ string) error {
			return ignore2(queueSvc(tok).NewQueueClient(q).GetProperties(ctx, nil))
		}},
		"setQueueMetadata": {"queue", fixed(queue, ""), func(ctx context.Context, tok, q, _ string) error {
			return ignore2(queueSvc(tok).NewQueueClient(q).SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: map[string]*string{"k": to.Ptr("v")}}))
		}},
		"getQueueACL": {"queue", fixed(queue, ""), func(ctx context.Context, tok, q, _ string) error {
			return ignore2(queueSvc(tok).NewQueueClient(q).GetAccessPolicy(ctx, nil))
		}},
		"putMessage": {"queue", fixed(queue, ""), func(ctx context.Context, tok, q, _ string) error {
			return ignore2(queueSvc(tok).NewQueueClient(q).EnqueueMessage(ctx, "hello", nil))
		}},
		"peekMessages": {"queue", fixed(queue, ""), func(ctx context.Context, tok, q, _ string) error {
			return ignore2(queueSvc(tok).NewQueueClient(q).PeekMessages(ctx, nil))
		}},
		"getMessages": {"queue", fixed(queue, ""), func(ctx context.Context, tok, q, _ string) error {
			return ignore2(queueSvc(tok).NewQueueClient(q).DequeueMessages(ctx, nil))
		}},
		"updateMessage": {"queue", newReceipt, func(ctx context.Context, tok, q, p string) error {
			id, rc, _ := strings.Cut(p, " ")
			return ignore2(queueSvc(tok).NewQueueClient(q).UpdateMessage(ctx, id, rc, "changed", nil))
		}},
		"deleteMessage": {"queue", newReceipt, func(ctx context.Context, tok, q, p string) error {
			id, rc, _ := strings.Cut(p, " ")
			return ignore2(queueSvc(tok).NewQueueClient(q).DeleteMessage(ctx, id, rc, nil))
		}},
		"clearMessages": {"queue", fixed(queue, ""), func(ctx context.Context, tok, q, _ string) error {
			return ignore2(queueSvc(tok).NewQueueClient(q).ClearMessages(ctx, nil))
		}},

		// Table service.
		"queryTables": {"table", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(tableSvc(tok).NewListTablesPager(nil).NextPage(ctx))
		}},
		"getTableServiceProperties": {"table", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(tableSvc(tok).GetProperties(ctx, nil))
		}},
		"setTableServiceProperties": {"table", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(tableSvc(tok).SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{}}, nil))
		}},
		"createTable": {"table", func(*testing.T, int) (string, string) { return uniq("fidn"), "" }, func(ctx context.Context, tok, tb, _ string) error {
			return ignore2(tableSvc(tok).CreateTable(ctx, tb, nil))
		}},
		"deleteTable": {"table", func(t *testing.T, _ int) (string, string) {
			name := uniq("fidt")
			_, err := tc.CreateTable(ctx, name, nil)
			must(t, err)
			return name, ""
		}, func(ctx context.Context, tok, tb, _ string) error {
			return ignore2(tableSvc(tok).DeleteTable(ctx, tb, nil))
		}},
		"getTableACL": {"table", fixed(table, ""), func(ctx context.Context, tok, tb, _ string) error {
			return ignore2(tableSvc(tok).NewClient(tb).GetAccessPolicy(ctx, nil))
		}},
		"insertEntity": {"table", fixed(table, ""), func(ctx context.Context, tok, tb, _ string) error {
			return ignore2(tableSvc(tok).NewClient(tb).AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"`+uniq("i")+`"}`), nil))
		}},
		"queryEntities": {"table", fixed(table, ""), func(ctx context.Context, tok, tb, _ string) error {
			return ignore2(tableSvc(tok).NewClient(tb).NewListEntitiesPager(nil).NextPage(ctx))
		}},
		"getEntity": {"table", fixed(table, "seed"), func(ctx context.Context, tok, tb, rk string) error {
			return ignore2(tableSvc(tok).NewClient(tb).GetEntity(ctx, "p", rk, nil))
		}},
		"updateEntity": {"table", newEntity, func(ctx context.Context, tok, tb, rk string) error {
			return ignore2(tableSvc(tok).NewClient(tb).UpdateEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"`+rk+`","V":2}`),
				&aztables.UpdateEntityOptions{IfMatch: to.Ptr(azcore.ETagAny), UpdateMode: aztables.UpdateModeMerge}))
		}},
		"upsertEntity": {"table", fixed(table, ""), func(ctx context.Context, tok, tb, _ string) error {
			return ignore2(tableSvc(tok).NewClient(tb).UpsertEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"`+uniq("u")+`"}`), nil))
		}},
		"deleteEntity": {"table", newEntity, func(ctx context.Context, tok, tb, rk string) error {
			return ignore2(tableSvc(tok).NewClient(tb).DeleteEntity(ctx, "p", rk, nil))
		}},

		// File service.
		"listShares": {"file", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(fileSvc(tok).NewListSharesPager(nil).NextPage(ctx))
		}},
		"getFileServiceProperties": {"file", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(fileSvc(tok).GetProperties(ctx, nil))
		}},
		"setFileServiceProperties": {"file", fixed("", ""), func(ctx context.Context, tok, _, _ string) error {
			return ignore2(fileSvc(tok).SetProperties(ctx, nil))
		}},
		"createShare": {"file", func(*testing.T, int) (string, string) { return uniq("fidn"), "" }, func(ctx context.Context, tok, s, _ string) error {
			return ignore2(fileShare(tok, s).Create(ctx, nil))
		}},
		"getShareProperties": {"file", fixed(shr, ""), func(ctx context.Context, tok, s, _ string) error {
			return ignore2(fileShare(tok, s).GetProperties(ctx, nil))
		}},
		"deleteShare": {"file", func(t *testing.T, _ int) (string, string) {
			name := uniq("fids")
			_, err := fc.NewShareClient(name).Create(ctx, nil)
			must(t, err)
			return name, ""
		}, func(ctx context.Context, tok, s, _ string) error {
			return ignore2(fileShare(tok, s).Delete(ctx, nil))
		}},
		"getShareACL": {"file", fixed(shr, ""), func(ctx context.Context, tok, s, _ string) error {
			return ignore2(fileShare(tok, s).GetAccessPolicy(ctx, nil))
		}},
		"listFilesAndDirectories": {"file", fixed(shr, ""), func(ctx context.Context, tok, s, _ string) error {
			return ignore2(fileShare(tok, s).NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil).NextPage(ctx))
		}},
		"createDirectory": {"file", func(*testing.T, int) (string, string) { return shr, uniq("d") }, func(ctx context.Context, tok, s, p string) error {
			return ignore2(fileShare(tok, s).NewDirectoryClient(p).Create(ctx, nil))
		}},
		"createFile": {"file", func(*testing.T, int) (string, string) { return shr, uniq("n") }, func(ctx context.Context, tok, s, p string) error {
			return ignore2(fileShare(tok, s).NewRootDirectoryClient().NewFileClient(p).Create(ctx, 8, nil))
		}},
		"createFileOverwrite": {"file", newFile, func(ctx context.Context, tok, s, p string) error {
			return ignore2(fileShare(tok, s).NewRootDirectoryClient().NewFileClient(p).Create(ctx, 8, nil))
		}},
		"copyFileOverwrite": {"file", newFile, func(ctx context.Context, tok, s, p string) error {
			return ignore2(fileShare(tok, s).NewRootDirectoryClient().NewFileClient(p).StartCopyFromURL(ctx, fileSrcURL, nil))
		}},
		"copyFileNew": {"file", func(*testing.T, int) (string, string) { return shr, uniq("cf") }, func(ctx context.Context, tok, s, p string) error {
			return ignore2(fileShare(tok, s).NewRootDirectoryClient().NewFileClient(p).StartCopyFromURL(ctx, fileSrcURL, nil))
		}},
		"putRange": {"file", newFile, func(ctx context.Context, tok, s, p string) error {
			return ignore2(fileShare(tok, s).NewRootDirectoryClient().NewFileClient(p).UploadRange(ctx, 0, body("abcd"), nil))
		}},
		"getFile": {"file", fixed(shr, "seed"), func(ctx context.Context, tok, s, p string) error {
			r, err := fileShare(tok, s).NewRootDirectoryClient().NewFileClient(p).DownloadStream(ctx, nil)
			if err == nil {
				_, err = io.ReadAll(r.Body)
				r.Body.Close()
			}
			return err
		}},
		"deleteFile": {"file", newFile, func(ctx context.Context, tok, s, p string) error {
			return ignore2(fileShare(tok, s).NewRootDirectoryClient().NewFileClient(p).Delete(ctx, nil))
		}},
	}

	rows := fidRows(
		// Blob: service-level operations take an account SAS with srt=s.
		fidAccount("blob", "listContainers", "s", "l"),
		fidAccount("blob", "getBlobServiceProperties", "s", "r"),
		fidAccount("blob", "setBlobServiceProperties", "s", "w"),
		// Containers: account SAS (srt=c) only; w creates as c does.
		fidAccount("blob", "createContainer", "c", "cw"), fidService("blob", "createContainer", "c", ""),
		fidAccount("blob", "getContainerProperties", "c", "r"), fidService("blob", "getContainerProperties", "c", ""),
		fidAccount("blob", "setContainerMetadata", "c", "w"), fidService("blob", "setContainerMetadata", "c", ""),
		fidAccount("blob", "deleteContainer", "c", "d"), fidService("blob", "deleteContainer", "c", ""),
		fidAccount("blob", "getContainerACL", "c", ""), fidService("blob", "getContainerACL", "c", ""),
		fidAccount("blob", "listBlobs", "c", "l"), fidService("blob", "listBlobs", "c", "l"),
		// Blobs: srt=o; a service SAS for the container or the blob.
		fidAccount("blob", "putBlobNew", "o", "cw"), fidService("blob", "putBlobNew", "c", "cw"), fidService("blob", "putBlobNew", "b", "cw"),
		// Create (c) writes new blobs only; replacing one takes w.
		[]fidSASRow{
			{"putBlobOverwrite", "account", "o", "w", true}, {"putBlobOverwrite", "account", "o", "c", false},
			{"putBlobOverwrite", "service", "b", "w", true}, {"putBlobOverwrite", "service", "b", "c", false},
			{"putBlobOverwrite", "service", "c", "w", true}, {"putBlobOverwrite", "service", "c", "c", false},
			{"copyBlobOverwrite", "account", "o", "w", true}, {"copyBlobOverwrite", "account", "o", "c", false},
			{"copyBlobOverwrite", "service", "b", "w", true}, {"copyBlobOverwrite", "service", "b", "c", false},
		},
		fidAccount("blob", "getBlob", "o", "r"), fidService("blob", "getBlob", "c", "r"), fidService("blob", "getBlob", "b", "r"),
		fidAccount("blob", "getBlobProperties", "o", "r"), fidService("blob", "getBlobProperties", "b", "r"),
		fidAccount("blob", "setBlobMetadata", "o", "w"), fidService("blob", "setBlobMetadata", "b", "w"),
		fidAccount("blob", "deleteBlob", "o", "d"), fidService("blob", "deleteBlob", "b", "d"),
		fidAccount("blob", "snapshotBlob", "o", "cw"), fidService("blob", "snapshotBlob", "b", "cw"),
		fidAccount("blob", "copyBlobToNew", "o", "cw"), fidService("blob", "copyBlobToNew", "c", "cw"), fidService("blob", "copyBlobToNew", "b", "cw"),
		fidAccount("blob", "appendBlock", "o", "aw"), fidService("blob", "appendBlock", "b", "aw"),
		fidAccount("blob", "getBlobTags", "o", "t"), fidService("blob", "getBlobTags", "b", "t"),
		// Leases take Write; from version 2017-07-29 (the SDK signs a
		// later one) Delete also breaks a blob's lease, and with an
		// account SAS a container's (Create an account SAS, note to the
		// Blob service table; Create a service SAS, "Permissions for a
		// directory, container, or blob").
		fidAccount("blob", "acquireBlobLease", "o", "w"), fidService("blob", "acquireBlobLease", "b", "w"),
		fidAccount("blob", "breakBlobLease", "o", "wd"), fidService("blob", "breakBlobLease", "b", "wd"), fidService("blob", "breakBlobLease", "c", "wd"),
		fidAccount("blob", "acquireContainerLease", "c", "w"), fidService("blob", "acquireContainerLease", "c", ""),
		fidAccount("blob", "breakContainerLease", "c", "wd"), fidService("blob", "breakContainerLease", "c", ""),

		// Queue.
		fidAccount("queue", "listQueues", "s", "l"),
		fidAccount("queue", "getQueueServiceProperties", "s", "r"),
		fidAccount("queue", "setQueueServiceProperties", "s", "w"),
		fidAccount("queue", "createQueue", "c", "cw"),
		fidAccount("queue", "deleteQueue", "c", "d"), fidService("queue", "deleteQueue", "q", ""),
		fidAccount("queue", "getQueueMetadata", "c", "r"), fidService("queue", "getQueueMetadata", "q", "r"),
		fidAccount("queue", "setQueueMetadata", "c", "w"), fidService("queue", "setQueueMetadata", "q", ""),
		fidAccount("queue", "getQueueACL", "c", ""), fidService("queue", "getQueueACL", "q", ""),
		fidAccount("queue", "putMessage", "o", "a"), fidService("queue", "putMessage", "q", "a"),
		fidAccount("queue", "peekMessages", "o", "r"), fidService("queue", "peekMessages", "q", "r"),
		fidAccount("queue", "getMessages", "o", "p"), fidService("queue", "getMessages", "q", "p"),
		fidAccount("queue", "updateMessage", "o", "u"), fidService("queue", "updateMessage", "q", "u"),
		fidAccount("queue", "deleteMessage", "o", "p"), fidService("queue", "deleteMessage", "q", "p"),
		// Clear Messages takes Delete, which a queue's service SAS does
		// not have (its letters are r, a, u, p): no service SAS clears a
		// queue, not even one signed with d.
		fidAccount("queue", "clearMessages", "o", "d"), fidService("queue", "clearMessages", "q", ""),
		[]fidSASRow{{"clearMessages", "service", "q", "d", false}, {"clearMessages", "service", "q", "raupd", false}},

		// Table: table operations take an account SAS only; Query
		// Tables is a container-level operation (srt=c) taking List.
		fidAccount("table", "queryTables", "c", "l"),
		fidAccount("table", "getTableServiceProperties", "s", "r"),
		fidAccount("table", "setTableServiceProperties", "s", "w"),
		fidAccount("table", "createTable", "c", "cw"),
		fidAccount("table", "deleteTable", "c", "d"),
		fidAccount("table", "getTableACL", "c", ""), fidService("table", "getTableACL", "t", ""),
		fidAccount("table", "insertEntity", "o", "a"), fidService("table", "insertEntity", "t", "a"),
		fidAccount("table", "queryEntities", "o", "r"), fidService("table", "queryEntities", "t", "r"),
		fidAccount("table", "getEntity", "o", "r"), fidService("table", "getEntity", "t", "r"),
		fidAccount("table", "updateEntity", "o", "u"), fidService("table", "updateEntity", "t", "u"),
		fidAccount("table", "deleteEntity", "o", "d"), fidService("table", "deleteEntity", "t", "d"),
		// Insert Or Replace needs both a and u.
		[]fidSASRow{
			{"upsertEntity", "account", "o", "au", true}, {"upsertEntity", "account", "o", "a", false}, {"upsertEntity", "account", "o", "u", false},
			{"upsertEntity", "service", "t", "au", true}, {"upsertEntity", "service", "t", "a", false}, {"upsertEntity", "service", "t", "u", false},
		},

		// File.
		fidAccount("file", "listShares", "s", "l"),
		fidAccount("file", "getFileServiceProperties", "s", "r"),
		fidAccount("file", "setFileServiceProperties", "s", "w"),
		fidAccount("file", "createShare", "c", "cw"), fidService("file", "createShare", "s", ""),
		fidAccount("file", "getShareProperties", "c", "r"), fidService("file", "getShareProperties", "s", ""),
		fidAccount("file", "deleteShare", "c", "d"), fidService("file", "deleteShare", "s", ""),
		fidAccount("file", "getShareACL", "c", ""), fidService("file", "getShareACL", "s", ""),
		fidAccount("file", "listFilesAndDirectories", "c", "l"), fidService("file", "listFilesAndDirectories", "s", "l"),
		fidAccount("file", "createDirectory", "o", "cw"), fidService("file", "createDirectory", "s", "cw"),
		fidAccount("file", "createFile", "o", "cw"), fidService("file", "createFile", "s", "cw"),
		[]fidSASRow{
			{"createFileOverwrite", "account", "o", "w", true}, {"createFileOverwrite", "account", "o", "c", false},
			{"createFileOverwrite", "service", "s", "w", true}, {"createFileOverwrite", "service", "s", "c", false},
			{"createFileOverwrite", "service", "f", "w", true}, {"createFileOverwrite", "service", "f", "c", false},
			{"copyFileOverwrite", "account", "o", "w", true}, {"copyFileOverwrite", "account", "o", "c", false},
			{"copyFileOverwrite", "service", "f", "w", true}, {"copyFileOverwrite", "service", "f", "c", false},
		},
		fidAccount("file", "copyFileNew", "o", "cw"), fidService("file", "copyFileNew", "s", "cw"),
		fidAccount("file", "putRange", "o", "w"), fidService("file", "putRange", "s", "w"), fidService("file", "putRange", "f", "w"),
		fidAccount("file", "getFile", "o", "r"), fidService("file", "getFile", "s", "r"), fidService("file", "getFile", "f", "r"),
		fidAccount("file", "deleteFile", "o", "d"), fidService("file", "deleteFile", "f", "d"),
	)

	allowed, refused := 0, 0
	for i, row := range rows {
		op, ok := ops[row.op]
		if !ok {
			t.Fatalf("row %d: no operation %q", i, row.op)
		}
		name := fmt.Sprintf("%s/%s/%s=%s/%s", op.svc, row.op, row.kind, row.res, row.perms)
		if row.perms == "" {
			// An operation no letter reaches (fidAccount with need ""):
			// only its refusal with every letter is a row.
			continue
		}
		c, p := op.prep(t, i)
		tok := fidSASToken(t, a, op.svc, row, c, p, exp)
		err := op.run(ctx, tok, c, p)
		if row.allow {
			allowed++
			if err != nil {
				t.Errorf("%s: refused: %v", name, err)
			}
			continue
		}
		refused++
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden {
			t.Errorf("%s: want 403, got %v", name, err)
		}
	}
	t.Logf("%d rows: %d allowed, %d refused", allowed+refused, allowed, refused)
}

func fidBlobCred(t *testing.T) *blobservice.SharedKeyCredential {
	cred, err := blobservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	return cred
}

func fidFileCred(t *testing.T) *fileservice.SharedKeyCredential {
	cred, err := fileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	return cred
}

// fidSASToken signs row's SAS with the service's SDK builder (HTTP
// allowed) for container c and path p.
func fidSASToken(t *testing.T, a *app.App, svc string, row fidSASRow, c, p string, exp time.Time) string {
	t.Helper()
	if row.kind == "account" {
		return accountSAS(t, svc, accountSASValues{Expiry: exp, Perms: row.perms, ResourceTypes: row.res})
	}
	switch svc {
	case "blob":
		v := bsas.BlobSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: row.perms, ContainerName: c}
		if row.res == "b" {
			v.BlobName = p
		}
		qp, err := v.SignWithSharedKey(fidBlobCred(t))
		must(t, err)
		return qp.Encode()
	case "queue":
		if strings.Trim(row.perms, "raup") != "" {
			return fidQueueSASByHand(t, row.perms, c, exp)
		}
		cred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
		must(t, err)
		qp, err := qsas.QueueSignatureValues{Protocol: qsas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: row.perms, QueueName: c}.SignWithSharedKey(cred)
		must(t, err)
		return qp.Encode()
	case "table":
		cred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
		must(t, err)
		tok, err := aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: row.perms, TableName: c}.Sign(cred)
		must(t, err)
		return tok
	case "file":
		cred, err := fileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
		must(t, err)
		v := fsas.SignatureValues{Protocol: fsas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: row.perms, ShareName: c}
		if row.res == "f" {
			v.FilePath = p
		}
		qp, err := v.SignWithSharedKey(cred)
		must(t, err)
		return qp.Encode()
	}
	t.Fatalf("no service %q", svc)
	return ""
}

// fidQueueSASByHand signs a queue service SAS with permission letters the
// SDK's builder refuses (Create a service SAS, "Version 2015-04-05 and
// later" string-to-sign: sp, st, se, canonicalized resource, si, sip,
// spr, sv).
func fidQueueSASByHand(t *testing.T, perms, queue string, exp time.Time) string {
	t.Helper()
	const sv = "2020-10-02"
	se := exp.UTC().Format("2006-01-02T15:04:05Z")
	toSign := strings.Join([]string{perms, "", se, "/queue/" + app.DevAccount + "/" + queue, "", "", "https,http", sv}, "\n")
	key, err := base64.StdEncoding.DecodeString(app.DevKey)
	must(t, err)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(toSign))
	q := url.Values{"sv": {sv}, "se": {se}, "sp": {perms}, "spr": {"https,http"}, "sig": {base64.StdEncoding.EncodeToString(mac.Sum(nil))}}
	return q.Encode()
}

// A copy reads its source with the credentials the source URL carries:
// a SAS there that does not grant read refuses the copy (403
// CannotVerifyCopySource) even when the destination is authorized with
// Shared Key, and nothing is written; without a SAS a Shared Key request
// reads a source of its own account.
func TestFidSvcSASCopySourceNeedsRead(t *testing.T) {
	a, _ := startApp4(t, 0, -1, -1, 0)
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	bc := client(t, a.BlobURL, app.DevKey)
	_, err := bc.CreateContainer(ctx, "src", nil)
	must(t, err)
	_, err = bc.UploadBuffer(ctx, "src", "s", []byte("source bytes"), nil)
	must(t, err)
	srcURL := func(perms string) string {
		u := a.BlobURL + "/src/s"
		if perms == "" {
			return u
		}
		qp, err := bsas.BlobSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: perms, ContainerName: "src", BlobName: "s"}.SignWithSharedKey(fidBlobCred(t))
		must(t, err)
		return u + "?" + qp.Encode()
	}
	dst := bc.ServiceClient().NewContainerClient("src")
	for _, perms := range []string{"w", "acwd", "l"} {
		_, err := dst.NewBlobClient("copy-"+perms).StartCopyFromURL(ctx, srcURL(perms), nil)
		wantCode(t, err, 403, "CannotVerifyCopySource")
		_, err = dst.NewBlockBlobClient("put-"+perms).UploadBlobFromURL(ctx, srcURL(perms), nil)
		wantCode(t, err, 403, "CannotVerifyCopySource")
		for _, n := range []string{"copy-" + perms, "put-" + perms} {
			if _, err := dst.NewBlobClient(n).GetProperties(ctx, nil); err == nil {
				t.Fatalf("refused copy wrote %s", n)
			}
		}
	}
	for _, perms := range []string{"r", ""} {
		_, err := dst.NewBlobClient("copy-ok"+perms).StartCopyFromURL(ctx, srcURL(perms), nil)
		must(t, err)
		_, err = dst.NewBlockBlobClient("put-ok"+perms).UploadBlobFromURL(ctx, srcURL(perms), nil)
		must(t, err)
	}

	// The File service the same way.
	fc := fileClient(t, a.FileURL, app.DevKey)
	sh := fc.NewShareClient("fsrc")
	_, err = sh.Create(ctx, nil)
	must(t, err)
	_, err = sh.NewRootDirectoryClient().NewFileClient("s").Create(ctx, 4, nil)
	must(t, err)
	fcred, err := fileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qp, err := fsas.SignatureValues{Protocol: fsas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: "cw", ShareName: "fsrc", FilePath: "s"}.SignWithSharedKey(fcred)
	must(t, err)
	_, err = sh.NewRootDirectoryClient().NewFileClient("d").StartCopyFromURL(ctx, a.FileURL+"/fsrc/s?"+qp.Encode(), nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 403 || re.ErrorCode != "CannotVerifyCopySource" {
		t.Fatalf("file copy with a source SAS without r: %v", err)
	}
}
