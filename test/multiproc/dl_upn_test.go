package multiproc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	dlservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
)

// userToken is a Microsoft Entra ID access token for Azure Storage of a
// user with object id oid and user principal name upn (the oid and upn
// claims of "Microsoft identity platform access tokens"). --oauth basic
// does not verify signatures, so it is not signed.
type userToken struct{ oid, upn string }

func (u userToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	enc := base64.RawURLEncoding.EncodeToString
	hdr, _ := json.Marshal(map[string]string{"typ": "JWT", "alg": "RS256"})
	now := time.Now()
	body, _ := json.Marshal(map[string]any{
		"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
		"tid": "72f988bf-86f1-41af-91ab-2d7cd011db47", "nbf": now.Add(-time.Hour).Unix(), "exp": now.Add(time.Hour).Unix(),
		"oid": u.oid, "upn": u.upn,
	})
	return azcore.AccessToken{Token: enc(hdr) + "." + enc(body) + "." + enc([]byte("sig")), ExpiresOn: now.Add(time.Hour)}, nil
}

// DFSAs returns a datalake service client of process i's dfs endpoint
// that authenticates with cred's bearer tokens (a bearer cluster only).
func (c *cluster) DFSAs(i int, cred azcore.TokenCredential) *dlservice.Client {
	c.t.Helper()
	cl, err := dlservice.NewClient(c.url(i, dfsSvc), cred, &dlservice.ClientOptions{ClientOptions: c.clientOptions()})
	if err != nil {
		c.t.Fatal(err)
	}
	return cl
}

// TestDLUPNAcrossProcesses: the user principal names upn=true answers
// (Path - List, Path - Get Properties with getAccessControl) are learned
// from bearer tokens into the shared store, so every process answers
// what any process learned, at once, and after a restart. Process A
// (0) creates a file with a token of user X: B (1) and C (2), which never
// saw a token of X, name X as the file's owner. B then sees a token of
// X with a new name: A answers the new name on its next request. A token
// with the old name reaching A again changes nothing while A trusts its
// memory of having stored that name (CERULEAN_UPN_RECHECK, here a few
// seconds; 15 minutes by default); once that has passed A reads the
// store, writes the token's name back, and B answers it. Stopped and
// started again, A answers the stored name before any token reaches it.
//
// The processes run on the real clock, so the recheck is waited for
// (polled, bounded), not advanced; TestLearnWritesOnlyNewOrChanged and
// TestLearnRecheckInterval (internal/hns/upn) cover it on a fake clock.
func TestDLUPNAcrossProcesses(t *testing.T) {
	const recheck = 5 * time.Second
	l := dlLayout()
	l.bearer = true
	l.env = append(l.env, "CERULEAN_UPN_RECHECK="+recheck.String())
	c := newMixedCluster(t, l)
	ctx := ctxFor(t, 3*time.Minute)
	const fs, x = "names", "5a5a5a5a-0000-0000-0000-00000000000a"
	const oldName, newName = "x@contoso.example", "x.renamed@contoso.example"
	_, err := c.DFS(0).NewFileSystemClient(fs).Create(ctx, nil)
	must(t, "create the filesystem", err)
	_, err = c.DFS(0).NewFileSystemClient(fs).NewDirectoryClient("").SetAccessControl(ctx, &directory.SetAccessControlOptions{Permissions: to.Ptr("0777")})
	must(t, "open the root to bearer callers", err)

	// owner is what process i answers for x.txt's owner with upn=true,
	// through List Paths and getAccessControl (Shared Key clients: they
	// teach the process nothing); both must agree.
	owner := func(i int) string {
		t.Helper()
		fc := c.DFS(i).NewFileSystemClient(fs)
		page, err := fc.NewListPathsPager(false, &filesystem.ListPathsOptions{UPN: to.Ptr(true)}).NextPage(ctx)
		must(t, fmt.Sprintf("process %d: List Paths upn=true", i), err)
		listed := ""
		for _, p := range page.Paths {
			if *p.Name == "x.txt" {
				listed = *p.Owner
			}
		}
		ac, err := fc.NewFileClient("x.txt").GetAccessControl(ctx, &file.GetAccessControlOptions{UPN: to.Ptr(true)})
		must(t, fmt.Sprintf("process %d: getAccessControl upn=true", i), err)
		if listed != *ac.Owner {
			t.Fatalf("process %d: List Paths names the owner %q, getAccessControl %q", i, listed, *ac.Owner)
		}
		return listed
	}
	// request sends one bearer request of X, with name upn, to process i.
	request := func(i int, upn string) {
		t.Helper()
		_, err := c.DFSAs(i, userToken{x, upn}).NewFileSystemClient(fs).NewFileClient("x.txt").GetAccessControl(ctx, nil)
		must(t, fmt.Sprintf("process %d: a request of %s", i, upn), err)
	}

	learnedAt := time.Now()
	_, err = c.DFSAs(0, userToken{x, oldName}).NewFileSystemClient(fs).NewFileClient("x.txt").Create(ctx, nil)
	must(t, "process 0: create x.txt with a token of X", err)
	ac, err := c.DFS(1).NewFileSystemClient(fs).NewFileClient("x.txt").GetAccessControl(ctx, nil)
	must(t, "process 1: getAccessControl", err)
	if *ac.Owner != x {
		t.Fatalf("x.txt is owned by %q, want X's object id", *ac.Owner)
	}
	for _, i := range []int{1, 2} {
		if got := owner(i); got != oldName {
			t.Fatalf("process %d, which never saw a token of X, names X %q, want %q", i, got, oldName)
		}
	}

	request(1, newName)
	for i := range nodes {
		if got := owner(i); got != newName {
			t.Fatalf("after process 1 saw X's new name: process %d names X %q", i, got)
		}
	}

	// Within the recheck interval A trusts its memory: the old name it
	// stored is not written again.
	request(0, oldName)
	got := owner(1)
	if time.Since(learnedAt) < recheck {
		if got != newName {
			t.Fatalf("process 0 wrote %q back within the recheck interval (process 1 names X %q)", oldName, got)
		}
	} else {
		t.Logf("the steps took %v, more than the recheck interval: the trusted memory was not observed", time.Since(learnedAt).Round(time.Millisecond))
	}
	// Then it reads the store again and writes the token's name.
	deadline := time.Now().Add(recheck + 30*time.Second)
	for got != oldName {
		if time.Now().After(deadline) {
			t.Fatalf("process 0 never wrote %q back after the recheck interval: process 1 names X %q", oldName, got)
		}
		time.Sleep(100 * time.Millisecond)
		request(0, oldName)
		got = owner(1)
	}
	if since := time.Since(learnedAt); since < recheck {
		t.Fatalf("process 0 wrote %q back %v after learning it, before the recheck interval (%v)", oldName, since, recheck)
	}

	// Durable: A, stopped and started again, answers the stored name
	// before any token reaches it.
	c.signal(c.nodes[0], syscall.SIGTERM)
	c.Restart(0)
	if got := owner(0); got != oldName {
		t.Fatalf("process 0 after a restart names X %q, want %q", got, oldName)
	}
}
