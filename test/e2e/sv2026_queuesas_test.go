package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	blobservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
	queuesas "github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// queueUDSAS is a user delegation SAS for queueName signed with k in the
// layout .NET's QueueSasBuilder and Java's QueueSasImplUtil sign (written
// out here, not taken from the server):
// sp st se res skoid sktid skt ske sks skv skdutid sduoid sip spr sv.
func queueUDSAS(t *testing.T, k udkXML, sv, queueName, perms, sduoid string, expiry time.Time) string {
	t.Helper()
	se := expiry.UTC().Format(time.RFC3339)
	sts := strings.Join([]string{perms, "", se, "/queue/" + app.DevAccount + "/" + queueName,
		k.SignedOid, k.SignedTid, k.SignedStart, k.SignedExpiry, k.SignedService, k.SignedVersion,
		k.SignedDelegatedUserTid, sduoid, "", "https", sv}, "\n")
	key, err := base64.StdEncoding.DecodeString(k.Value)
	must(t, err)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sts))
	q := url.Values{"sv": {sv}, "sp": {perms}, "se": {se}, "spr": {"https"},
		"skoid": {k.SignedOid}, "sktid": {k.SignedTid}, "skt": {k.SignedStart}, "ske": {k.SignedExpiry}, "sks": {k.SignedService}, "skv": {k.SignedVersion},
		"sig": {base64.StdEncoding.EncodeToString(m.Sum(nil))}}
	if k.SignedDelegatedUserTid != "" {
		q.Set("skdutid", k.SignedDelegatedUserTid)
	}
	if sduoid != "" {
		q.Set("sduoid", sduoid)
	}
	return q.Encode()
}

// startTLSClock is startTLS (OAuth basic mode) with clock control, and a
// function advancing the server's clock through the Queue port.
func startTLSClock(t *testing.T) (*app.App, azcore.ClientOptions, func(time.Duration)) {
	t.Helper()
	cert, pool := selfSigned(t)
	cfg := backendConfig(t)
	cfg.BlobPort, cfg.QueuePort, cfg.TablePort, cfg.FilePort, cfg.SMBPort, cfg.MetricsPort = 0, 0, -1, -1, -1, -1
	cfg.DFSPort = -1
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	cfg.OAuth, cfg.ClockControl = true, true
	a, err := app.Start(cfg)
	must(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	advance := func(d time.Duration) {
		t.Helper()
		u := "https://" + app.ClientAddr(a.Endpoints()["queue"]) + server.ReservedPrefix + "/clock/advance?by=" + d.String()
		resp, err := hc.Post(u, "", nil)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("advance by %s: status %d", d, resp.StatusCode)
		}
	}
	return a, azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}, advance
}

// TestSV2026QueueUserDelegationSAS: user delegation SAS for Queue Storage
// (2026-02-06: azure-storage-queue 12.15.0b1
// QueueServiceClient.get_user_delegation_key and
// generate_queue_sas(user_delegation_key=..., user_delegation_oid=...);
// Azure.Storage.Queues 12.25.0-beta.1 "Added support for User Delegation
// SAS"). Get User Delegation Key answers on the Queue endpoint with a key
// for sks "q", for bearer tokens only (Shared Key and SAS callers 403
// AuthenticationFailed); a queue SAS signed with it works through azqueue
// for what it grants (peek with r, receive and delete with p), a missing
// permission is 403 AuthorizationPermissionMismatch; a tampered token,
// another queue, a Blob key, an sv before 2026-02-06 are 403
// AuthenticationFailed; a SAS bound to a user (sduoid) needs that user's
// token (and, with a cross-tenant key, that tenant's); an expired SAS,
// then an expired key, are 403 AuthenticationFailed once the server's
// clock passes them. Fails before the change: Get User Delegation Key was
// not served on the Queue endpoint and every delegation SAS there was 403.
func TestSV2026QueueUserDelegationSAS(t *testing.T) {
	a, opts, advance := startTLSClock(t)
	ctx := context.Background()
	hc := opts.Transport.(*http.Client)
	owner := userToken{oid: "00000000-0000-0000-0000-0000000000a1", tid: "72f988bf-86f1-41af-91ab-2d7cd011db47"}
	user := userToken{oid: "00000000-0000-0000-0000-0000000000b2", tid: owner.tid}
	// A fresh options value per client: a client built with a credential
	// adds its policy to the options it is given.
	qopts := func() *azqueue.ClientOptions { return &azqueue.ClientOptions{ClientOptions: opts} }

	svc, err := azqueue.NewServiceClient(a.QueueURL, owner, qopts())
	must(t, err)
	_, err = svc.CreateQueue(ctx, "udq", nil)
	must(t, err)
	_, err = svc.CreateQueue(ctx, "otherq", nil)
	must(t, err)
	oq := svc.NewQueueClient("udq")
	for _, m := range []string{"one", "two", "three"} {
		_, err = oq.EnqueueMessage(ctx, m, nil)
		must(t, err)
	}

	now := time.Now().UTC()
	keyExpiry := now.Add(time.Hour)
	k := getUDK(t, hc, a.QueueURL, owner, keyExpiry, "")
	if k.SignedService != "q" || k.SignedOid != owner.oid || k.SignedTid != owner.tid {
		t.Fatalf("key %+v", k)
	}

	// Bearer tokens only: Shared Key (signed by azblob's client, the same
	// Shared Key scheme) and an account SAS are refused.
	skc, err := blobservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bsc, err := blobservice.NewClientWithSharedKeyCredential(a.QueueURL, skc, &blobservice.ClientOptions{ClientOptions: opts})
	must(t, err)
	info := blobservice.KeyInfo{Expiry: to.Ptr(keyExpiry.Format(time.RFC3339))}
	_, err = bsc.GetUserDelegationCredential(ctx, info, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthenticationFailed)
	qskc, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	sksvc, err := azqueue.NewServiceClientWithSharedKeyCredential(a.QueueURL, qskc, qopts())
	must(t, err)
	acctSAS, err := sksvc.GetSASURL(queuesas.AccountResourceTypes{Service: true, Container: true, Object: true},
		queuesas.AccountPermissions{Read: true, Write: true, Add: true, Create: true, List: true, Process: true, Update: true}, now.Add(time.Hour), nil)
	must(t, err)
	sasURL, _ := url.Parse(acctSAS)
	bsas, err := blobservice.NewClientWithNoCredential(a.QueueURL+"/?"+sasURL.RawQuery, &blobservice.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = bsas.GetUserDelegationCredential(ctx, info, nil)
	wantCode(t, err, http.StatusForbidden, bloberror.AuthenticationFailed)

	const sv = "2026-02-06"
	sasClient := func(queueName, token string) *azqueue.QueueClient {
		t.Helper()
		c, err := azqueue.NewQueueClientWithNoCredential(a.QueueURL+"/"+queueName+"?"+token, qopts())
		must(t, err)
		return c
	}

	// r and p: peek, receive and delete; no add.
	rp := queueUDSAS(t, k, sv, "udq", "rp", "", now.Add(30*time.Minute))
	qc := sasClient("udq", rp)
	peek, err := qc.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(3))})
	must(t, err)
	if len(peek.Messages) != 3 || *peek.Messages[0].MessageText != "one" {
		t.Fatalf("peek %+v", peek.Messages)
	}
	got, err := qc.DequeueMessage(ctx, nil)
	must(t, err)
	if len(got.Messages) != 1 || *got.Messages[0].MessageText != "one" {
		t.Fatalf("receive %+v", got.Messages)
	}
	_, err = qc.DeleteMessage(ctx, *got.Messages[0].MessageID, *got.Messages[0].PopReceipt, nil)
	must(t, err)
	_, err = qc.EnqueueMessage(ctx, "four", nil)
	quWant(t, err, http.StatusForbidden, queueerror.AuthorizationPermissionMismatch)

	// r only: peek, not receive.
	r := queueUDSAS(t, k, sv, "udq", "r", "", now.Add(30*time.Minute))
	_, err = sasClient("udq", r).PeekMessage(ctx, nil)
	must(t, err)
	_, err = sasClient("udq", r).DequeueMessage(ctx, nil)
	quWant(t, err, http.StatusForbidden, queueerror.AuthorizationPermissionMismatch)

	refused := func(what, queueName, token string) {
		t.Helper()
		_, err := sasClient(queueName, token).PeekMessage(ctx, nil)
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		quWant(t, err, http.StatusForbidden, queueerror.AuthenticationFailed)
	}
	refused("tampered permissions", "udq", strings.Replace(r, "sp=r", "sp=rp", 1))
	refused("wrong signature", "udq", func() string {
		q, _ := url.ParseQuery(rp)
		sig, _ := base64.StdEncoding.DecodeString(q.Get("sig"))
		sig[0] ^= 1
		q.Set("sig", base64.StdEncoding.EncodeToString(sig))
		return q.Encode()
	}())
	refused("another queue", "otherq", r)
	refused("sv before 2026-02-06", "udq", queueUDSAS(t, k, "2025-11-05", "udq", "r", "", now.Add(30*time.Minute)))
	refused("blob key", "udq", queueUDSAS(t, getUDK(t, hc, a.BlobURL, owner, keyExpiry, ""), sv, "udq", "r", "", now.Add(30*time.Minute)))
	// The Shared Key service SAS layout signed with the delegation key.
	refused("service SAS layout", "udq", func() string {
		q, _ := url.ParseQuery(r)
		key, _ := base64.StdEncoding.DecodeString(k.Value)
		m := hmac.New(sha256.New, key)
		m.Write([]byte(strings.Join([]string{"r", "", q.Get("se"), "/queue/" + app.DevAccount + "/udq", "", "", "https", sv}, "\n")))
		q.Set("sig", base64.StdEncoding.EncodeToString(m.Sum(nil)))
		return q.Encode()
	}())

	// Bound to a user (sduoid): with that user's token only.
	bound := queueUDSAS(t, k, sv, "udq", "r", user.oid, now.Add(30*time.Minute))
	refused("sduoid without a token", "udq", bound)
	bc, err := azqueue.NewQueueClient(a.QueueURL+"/udq?"+bound, user, qopts())
	must(t, err)
	_, err = bc.PeekMessage(ctx, nil)
	must(t, err)
	_, err = bc.DequeueMessage(ctx, nil)
	quWant(t, err, http.StatusForbidden, queueerror.AuthorizationPermissionMismatch)
	oc, err := azqueue.NewQueueClient(a.QueueURL+"/udq?"+bound, owner, qopts())
	must(t, err)
	_, err = oc.PeekMessage(ctx, nil)
	quWant(t, err, http.StatusForbidden, queueerror.AuthenticationFailed)
	// A cross-tenant key (2026-04-06, user_delegation_tid): the token's
	// tenant must be the delegated user's.
	guestTenant := "11111111-2222-3333-4444-555555555555"
	xk := getUDK(t, hc, a.QueueURL, owner, keyExpiry, guestTenant)
	if xk.SignedDelegatedUserTid != guestTenant {
		t.Fatalf("cross-tenant key %+v", xk)
	}
	xbound := queueUDSAS(t, xk, "2026-04-06", "udq", "r", user.oid, now.Add(30*time.Minute))
	guest, err := azqueue.NewQueueClient(a.QueueURL+"/udq?"+xbound, userToken{oid: user.oid, tid: guestTenant}, qopts())
	must(t, err)
	_, err = guest.PeekMessage(ctx, nil)
	must(t, err)
	home, err := azqueue.NewQueueClient(a.QueueURL+"/udq?"+xbound, user, qopts())
	must(t, err)
	_, err = home.PeekMessage(ctx, nil)
	quWant(t, err, http.StatusForbidden, queueerror.AuthenticationFailed)

	// Expiry: a SAS past its se, then one whose key is past ske.
	long := queueUDSAS(t, k, sv, "udq", "r", "", now.Add(3*time.Hour))
	_, err = sasClient("udq", long).PeekMessage(ctx, nil)
	must(t, err)
	advance(45 * time.Minute)
	refused("expired SAS", "udq", r)
	_, err = sasClient("udq", long).PeekMessage(ctx, nil)
	must(t, err)
	advance(30 * time.Minute)
	refused("expired key", "udq", long)
}
