package e2e

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	qsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestSASQueueAccount: an account SAS on the Queue service is held to
// its resource types (service: list queues; container: create and delete
// queues; object: messages) and to its permission letters.
func TestSASQueueAccount(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	exp := time.Now().Add(time.Hour)
	cred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	quMust(t, err)
	// The SDK's GetSASURL signs HTTPS-only tokens; these tests speak HTTP.
	mk := func(rt qsas.AccountResourceTypes, p qsas.AccountPermissions) *azqueue.ServiceClient {
		qp, err := qsas.AccountSignatureValues{Protocol: qsas.ProtocolHTTPSandHTTP, ExpiryTime: exp, Permissions: p.String(), ResourceTypes: rt.String()}.SignWithSharedKey(cred)
		quMust(t, err)
		c, err := azqueue.NewServiceClientWithNoCredential(e.app.QueueURL+"?"+qp.Encode(), quClientOptions())
		quMust(t, err)
		return c
	}
	all := qsas.AccountResourceTypes{Service: true, Container: true, Object: true}

	c := mk(all, qsas.AccountPermissions{List: true})
	_, err = c.NewListQueuesPager(nil).NextPage(e.ctx)
	quMust(t, err)
	_, err = c.CreateQueue(e.ctx, quName(), nil)
	quWant(t, err, 403, "AuthorizationPermissionMismatch")

	c = mk(qsas.AccountResourceTypes{Object: true}, qsas.AccountPermissions{List: true, Create: true, Add: true})
	_, err = c.NewListQueuesPager(nil).NextPage(e.ctx)
	quWant(t, err, 403, "AuthorizationResourceTypeMismatch")
	_, err = c.CreateQueue(e.ctx, quName(), nil)
	quWant(t, err, 403, "AuthorizationResourceTypeMismatch")
	// Object level with Add: messages may be enqueued.
	_, err = c.NewQueueClient(q.URL()[len(e.app.QueueURL)+1:]).EnqueueMessage(e.ctx, "via account sas", nil)
	quMust(t, err)

	c = mk(all, qsas.AccountPermissions{Read: true, Create: true, Delete: true, Process: true})
	name := quName()
	_, err = c.CreateQueue(e.ctx, name, nil)
	quMust(t, err)
	qc := c.NewQueueClient(q.URL()[len(e.app.QueueURL)+1:])
	got, err := qc.DequeueMessage(e.ctx, nil)
	quMust(t, err)
	if len(got.Messages) != 1 || *got.Messages[0].MessageText != "via account sas" {
		t.Fatalf("dequeued %+v", got.Messages)
	}
	_, err = qc.EnqueueMessage(e.ctx, "no add", nil)
	quWant(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = c.DeleteQueue(e.ctx, name, nil)
	quMust(t, err)
	// Queue ACLs are Shared Key only.
	_, err = qc.GetAccessPolicy(e.ctx, nil)
	quWant(t, err, 403, "AuthorizationFailure")
}

// TestSASTableAccount: an account SAS on the Table service; tables are
// container-level resources, entities object-level.
func TestSASTableAccount(t *testing.T) {
	e := tbStart(t)
	tc := e.table("sasacct")
	e.tbAdd(tc, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
	start, exp := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	cred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	tbMust(t, err)
	// The SDK's GetAccountSASURL signs HTTPS-only tokens; these tests
	// speak HTTP.
	mk := func(rt aztables.AccountSASResourceTypes, p aztables.AccountSASPermissions) *aztables.ServiceClient {
		qp, err := aztables.AccountSASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: exp,
			Permissions: p.String(), Services: "t", ResourceTypes: rt.String()}.Sign(cred)
		tbMust(t, err)
		c, err := aztables.NewServiceClientWithNoCredential(e.app.TableURL+"?"+qp.Encode(), tbOptions())
		tbMust(t, err)
		return c
	}
	all := aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true}

	c := mk(all, aztables.AccountSASPermissions{List: true, Read: true})
	_, err = c.NewListTablesPager(nil).NextPage(e.ctx)
	tbMust(t, err)
	_, err = c.NewClient("sasacct").GetEntity(e.ctx, "p", "r", nil)
	tbMust(t, err)
	_, err = c.CreateTable(e.ctx, "sasnew", nil)
	tbWant(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = c.NewClient("sasacct").AddEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "x"}), nil)
	tbWant(t, err, 403, "AuthorizationPermissionMismatch")

	c = mk(aztables.AccountSASResourceTypes{Object: true}, aztables.AccountSASPermissions{List: true, Create: true, Read: true, Add: true})
	_, err = c.NewListTablesPager(nil).NextPage(e.ctx)
	tbWant(t, err, 403, "AuthorizationResourceTypeMismatch")
	_, err = c.CreateTable(e.ctx, "sasnew", nil)
	tbWant(t, err, 403, "AuthorizationResourceTypeMismatch")
	_, err = c.NewClient("sasacct").AddEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "obj"}), nil)
	tbMust(t, err)

	c = mk(all, aztables.AccountSASPermissions{Create: true, Delete: true})
	_, err = c.CreateTable(e.ctx, "sasnew", nil)
	tbMust(t, err)
	_, err = c.DeleteTable(e.ctx, "sasnew", nil)
	tbMust(t, err)
}

// TestSASTableStoredPolicy: a service SAS naming a stored access policy
// (si) takes its permissions and expiry from the table's ACL, read at
// request time, so changing or removing the policy takes effect at once.
func TestSASTableStoredPolicy(t *testing.T) {
	e := tbStart(t)
	tc := e.table("saspol")
	e.tbAdd(tc, map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
	setPolicy := func(perm string) {
		t.Helper()
		var ids []*aztables.SignedIdentifier
		if perm != "" {
			ids = []*aztables.SignedIdentifier{{ID: to.Ptr("pol"), AccessPolicy: &aztables.AccessPolicy{
				Start: to.Ptr(time.Now().Add(-time.Hour).UTC().Truncate(time.Second)), Expiry: to.Ptr(time.Now().Add(time.Hour).UTC().Truncate(time.Second)), Permission: to.Ptr(perm)}}}
		}
		_, err := tc.SetAccessPolicy(e.ctx, &aztables.SetAccessPolicyOptions{TableACL: ids})
		tbMust(t, err)
	}
	setPolicy("r")
	cred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	tbMust(t, err)
	qp, err := aztables.SASSignatureValues{Identifier: "pol", TableName: "saspol", Protocol: aztables.SASProtocolHTTPSandHTTP}.Sign(cred)
	tbMust(t, err)
	s, err := aztables.NewServiceClientWithNoCredential(e.app.TableURL+"?"+qp, tbOptions())
	tbMust(t, err)
	c := s.NewClient("saspol")

	_, err = c.GetEntity(e.ctx, "p", "r", nil)
	tbMust(t, err)
	_, err = c.AddEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "new"}), nil)
	tbWant(t, err, 403, "AuthorizationPermissionMismatch")

	setPolicy("ra")
	_, err = c.AddEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "new"}), nil)
	tbMust(t, err)

	// Without the policy the signature names nothing: refused.
	setPolicy("")
	_, err = c.GetEntity(e.ctx, "p", "r", nil)
	if st, _ := tbCode(err); st != 403 {
		t.Fatalf("revoked policy: got %v, want 403", err)
	}
}
