package e2e

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// principalToken is an Entra ID access token for Azure Storage of the
// object id oid, listing groups, and with a user name in claim (upn,
// unique_name or preferred_username) when both are set (oauth basic
// mode checks its form and claims, not its signature).
type principalToken struct {
	oid         string
	groups      []string
	claim, name string
}

func (p principalToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	enc := base64.RawURLEncoding.EncodeToString
	hdr, _ := json.Marshal(map[string]string{"typ": "JWT", "alg": "RS256"})
	claims := map[string]any{
		"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
		"tid": "72f988bf-86f1-41af-91ab-2d7cd011db47", "nbf": time.Now().Add(-time.Hour).Unix(), "exp": time.Now().Add(time.Hour).Unix(),
		"oid": p.oid,
	}
	if p.groups != nil {
		claims["groups"] = p.groups
	}
	if p.claim != "" {
		claims[p.claim] = p.name
	}
	body, _ := json.Marshal(claims)
	return azcore.AccessToken{Token: enc(hdr) + "." + enc(body) + "." + enc([]byte("sig")), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// startDLBearer starts a hierarchical server over HTTPS with --oauth
// basic, for tests of bearer callers, and returns it with an HTTP
// client that trusts its certificate.
func startDLBearer(t *testing.T) (*dlEnv, *http.Client) {
	t.Helper()
	var hc *http.Client
	e := startDLWith(t, true, func(cfg *app.Config) *http.Client {
		cert, pool := selfSigned(t)
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		cfg.OAuth = true
		hc = &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		return hc
	})
	return e, hc
}

// TestDLACLEnforcement: with --oauth basic, a bearer caller is the
// principal of its token's oid and groups, and the ACLs decide what it
// may do (traverse on every parent, write and execute to create and
// delete, read and execute to list, the sticky bit, ownership to change
// access control): 403 AuthorizationPermissionMismatch otherwise. Shared
// Key callers are superusers.
func TestDLACLEnforcement(t *testing.T) {
	e, hc := startDLBearer(t)
	as := func(oid string, groups ...string) *filesystem.Client {
		opts := &service.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: hc}}
		svc, err := service.NewClient(e.app.DFSURL, principalToken{oid: oid, groups: groups}, opts)
		must(t, err)
		return svc.NewFileSystemClient("acl")
	}
	su := e.mkfs("acl")
	// The root is 0750 $superuser: open it to others' traverse and read.
	resp, body := e.raw(http.MethodPatch, "/acl/?action=setAccessControl", map[string]string{"x-ms-permissions": "0755"}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("root permissions: %d %s", resp.StatusCode, body)
	}
	for _, d := range []struct{ name, perm string }{{"private", "0700"}, {"shared", "1777"}, {"team", "0700"}} {
		_, err := su.NewDirectoryClient(d.name).Create(e.ctx, &directory.CreateOptions{Permissions: to.Ptr(d.perm), Umask: to.Ptr("0000")})
		must(t, err)
	}
	_, err := su.NewDirectoryClient("team").SetAccessControl(e.ctx, &directory.SetAccessControlOptions{ACL: to.Ptr("user::rwx,group::---,group:g1:r-x,mask::r-x,other::---")})
	must(t, err)

	u1, u2 := as("u1"), as("u2", "g1")
	// A file in a directory everyone may write: owned by its creator.
	_, err = u1.NewFileClient("shared/mine").Create(e.ctx, nil)
	must(t, err)
	ac, err := su.NewFileClient("shared/mine").GetAccessControl(e.ctx, nil)
	must(t, err)
	if *ac.Owner != "u1" || *ac.Group != "$superuser" {
		t.Fatalf("owner %s group %s", *ac.Owner, *ac.Group)
	}
	// No write on private, no read either.
	_, err = u1.NewFileClient("private/x").Create(e.ctx, nil)
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = u1.NewListPathsPager(true, &filesystem.ListPathsOptions{Prefix: to.Ptr("private")}).NextPage(e.ctx)
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	// A member of g1 lists team but may not create in it.
	page, err := u2.NewListPathsPager(false, &filesystem.ListPathsOptions{Prefix: to.Ptr("team")}).NextPage(e.ctx)
	must(t, err)
	if len(page.Paths) != 0 {
		t.Fatalf("team lists %d paths", len(page.Paths))
	}
	_, err = u2.NewDirectoryClient("team/sub").Create(e.ctx, nil)
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = u1.NewListPathsPager(false, &filesystem.ListPathsOptions{Prefix: to.Ptr("team")}).NextPage(e.ctx)
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	// The sticky bit: only the owner deletes or renames its file.
	_, err = u2.NewFileClient("shared/mine").Delete(e.ctx, nil)
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = u2.NewFileClient("shared/mine").Rename(e.ctx, "shared/stolen", nil)
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	// Only the owner (or a superuser) changes access control; only a
	// superuser the owner.
	_, err = u2.NewFileClient("shared/mine").SetAccessControl(e.ctx, &directory.SetAccessControlOptions{Permissions: to.Ptr("0777")})
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = u1.NewFileClient("shared/mine").SetAccessControl(e.ctx, &directory.SetAccessControlOptions{Permissions: to.Ptr("0600")})
	must(t, err)
	_, err = u1.NewFileClient("shared/mine").SetAccessControl(e.ctx, &directory.SetAccessControlOptions{Owner: to.Ptr("u2")})
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = u1.NewFileClient("shared/other").Create(e.ctx, &file.CreateOptions{Owner: to.Ptr("u2")})
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = u2.NewFileClient("shared/grp").Create(e.ctx, &file.CreateOptions{Group: to.Ptr("g2")})
	wantDL(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = u2.NewFileClient("shared/grp").Create(e.ctx, &file.CreateOptions{Group: to.Ptr("g1")})
	must(t, err)
	_, err = u1.NewFileClient("shared/mine").Rename(e.ctx, "shared/renamed", nil)
	must(t, err)
	_, err = u1.NewFileClient("shared/renamed").Delete(e.ctx, nil)
	must(t, err)
	// setAccessControlRecursive with forceFlag counts what the caller
	// may not change and goes on.
	_, err = su.NewFileClient("shared/su-file").Create(e.ctx, nil)
	must(t, err)
	_, err = u1.NewFileClient("shared/u1-file").Create(e.ctx, nil)
	must(t, err)
	res, err := u1.NewDirectoryClient("shared").UpdateAccessControlRecursive(e.ctx, "user:u9:r--", &directory.UpdateAccessControlRecursiveOptions{ContinueOnFailure: to.Ptr(true)})
	must(t, err)
	if *res.FilesSuccessful != 1 || *res.FailureCount != 3 { // the directory, su-file and grp are not u1's
		t.Fatalf("recursive as u1: %d files, %d failures", *res.FilesSuccessful, *res.FailureCount)
	}
}
