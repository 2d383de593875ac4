package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// userToken is an Entra ID access token (unsigned, as --oauth basic takes
// them) of the user oid in tenant tid.
type userToken struct{ oid, tid string }

func (u userToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	enc := base64.RawURLEncoding.EncodeToString
	hdr, _ := json.Marshal(map[string]string{"typ": "JWT", "alg": "RS256"})
	body, _ := json.Marshal(map[string]any{
		"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/" + u.tid + "/", "tid": u.tid, "oid": u.oid,
		"nbf": time.Now().Add(-time.Hour).Unix(), "exp": time.Now().Add(time.Hour).Unix(),
	})
	return azcore.AccessToken{Token: enc(hdr) + "." + enc(body) + "." + enc([]byte("sig")), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestSV2026UserBoundDelegationSAS: a user delegation SAS bound to one
// user (sduoid, BlobSignatureValues.SignedDelegatedUserObjectID, signed
// from 2025-07-05), used as azblob's own
// TestUserDelegationSASWithDelegatedUserObjectId uses it: a client with
// the SAS URL and that user's token credential, so the request carries
// both. It works with that user's token, for what the SAS grants (not
// for more: the SAS authorizes, the token names the caller); without a
// token, or with another user's, it is 403 AuthenticationFailed, Azure's
// answer in azure-sdk-for-net's ContainerIdentitySAS_DelegatedObjectId_Fail.
// With a cross-tenant key (skdutid) the token's tenant must be that one.
// Fails before the change: every SAS with sduoid was refused.
func TestSV2026UserBoundDelegationSAS(t *testing.T) {
	a, opts := startTLS(t, true)
	ctx := context.Background()
	pu, _ := url.Parse(a.BlobURL)
	popts := productionStyle(t, opts, pu.Host)
	prod := "https://" + app.DevAccount + ".blob.localhost:" + pu.Port() + "/"
	owner := userToken{oid: "00000000-0000-0000-0000-0000000000a1", tid: "72f988bf-86f1-41af-91ab-2d7cd011db47"}
	svc, err := service.NewClient(prod, owner, &service.ClientOptions{ClientOptions: popts})
	must(t, err)
	_, err = svc.CreateContainer(ctx, "bound", nil)
	must(t, err)

	user := userToken{oid: "00000000-0000-0000-0000-0000000000b2", tid: owner.tid}
	other := userToken{oid: "00000000-0000-0000-0000-0000000000c3", tid: owner.tid}
	guest := userToken{oid: user.oid, tid: "00000000-0000-0000-0000-0000000000dd"}
	now := time.Now().UTC()
	key := func(tenant string) *service.UserDelegationCredential {
		info := service.KeyInfo{Start: to.Ptr(now.Add(-time.Minute).Format(sas.TimeFormat)), Expiry: to.Ptr(now.Add(time.Hour).Format(sas.TimeFormat))}
		if tenant != "" {
			info.DelegatedUserTenantID = to.Ptr(tenant)
		}
		udc, err := svc.GetUserDelegationCredential(ctx, info, nil)
		must(t, err)
		return udc
	}
	sign := func(udc *service.UserDelegationCredential, name string) string {
		q, err := sas.BlobSignatureValues{
			Protocol: sas.ProtocolHTTPS, StartTime: now.Add(-time.Minute), ExpiryTime: now.Add(30 * time.Minute),
			Permissions: (&sas.BlobPermissions{Read: true, Create: true, Write: true, Add: true}).String(), ContainerName: "bound",
			SignedDelegatedUserObjectID: user.oid,
		}.SignWithUserDelegation(udc)
		must(t, err)
		if q.SignedDelegatedUserObjectID() != user.oid {
			t.Fatalf("sduoid %q", q.SignedDelegatedUserObjectID())
		}
		return a.BlobURL + "/bound/" + name + "?" + q.Encode()
	}
	with := func(u string, cred azcore.TokenCredential) *appendblob.Client {
		if cred == nil {
			c, err := appendblob.NewClientWithNoCredential(u, &appendblob.ClientOptions{ClientOptions: opts})
			must(t, err)
			return c
		}
		c, err := appendblob.NewClient(u, cred, &appendblob.ClientOptions{ClientOptions: opts})
		must(t, err)
		return c
	}

	u := sign(key(""), "ab")
	c := with(u, user)
	_, err = c.Create(ctx, nil)
	must(t, err)
	_, err = c.AppendBlock(ctx, body([]byte("bound")), nil)
	must(t, err)
	p, err := c.GetProperties(ctx, nil)
	must(t, err)
	if p.ContentLength == nil || *p.ContentLength != 5 {
		t.Fatalf("length %v", p.ContentLength)
	}
	// The SAS grants no delete: the user's token adds nothing to it.
	_, err = c.Delete(ctx, nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	// No token, another user's token: refused.
	_, err = with(u, nil).GetProperties(ctx, nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	_, err = with(u, other).GetProperties(ctx, nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	_, err = with(u, other).Create(ctx, nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	// A malformed user-bound SAS (sduoid twice) is refused, not left to
	// the token.
	_, err = with(u+"&sduoid="+user.oid, user).GetProperties(ctx, nil)
	wantCode(t, err, 403, "AuthenticationFailed")
	// An invalid token is the token's 401, as without a SAS.
	_, err = with(u, fakeToken{exp: time.Now().Add(-time.Hour), aud: "https://storage.azure.com"}).GetProperties(ctx, nil)
	wantCode(t, err, 401, "InvalidAuthenticationInfo")

	// A key for a delegated user of another tenant (skdutid): the token
	// must be that tenant's.
	u = sign(key(guest.tid), "ab")
	_, err = with(u, guest).GetProperties(ctx, nil)
	must(t, err)
	_, err = with(u, user).GetProperties(ctx, nil)
	wantCode(t, err, 403, "AuthenticationFailed")

	// A SAS without sduoid sent with a token is the token's request, as
	// before: the owner may delete.
	q, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPS, ExpiryTime: now.Add(time.Hour), Permissions: "r", ContainerName: "bound"}.SignWithUserDelegation(key(""))
	must(t, err)
	b, err := blob.NewClient(a.BlobURL+"/bound/ab?"+q.Encode(), owner, &blob.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = b.Delete(ctx, nil)
	must(t, err)
}
