package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/share"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// udkXML is a Get User Delegation Key answer.
type udkXML struct {
	SignedOid, SignedTid, SignedStart, SignedExpiry, SignedService, SignedVersion string
	SignedDelegatedUserTid                                                        string
	Value                                                                         string
}

// getUDK asks endpoint (a service URL, path-style) for a user delegation
// key with tok's bearer token, as the SDKs' GetUserDelegationKey does.
func getUDK(t *testing.T, hc *http.Client, endpoint string, tok azcore.TokenCredential, expiry time.Time, tenant string) udkXML {
	t.Helper()
	body := "<KeyInfo><Expiry>" + expiry.UTC().Format(time.RFC3339) + "</Expiry>"
	if tenant != "" {
		body += "<DelegatedUserTid>" + tenant + "</DelegatedUserTid>"
	}
	body += "</KeyInfo>"
	req, err := http.NewRequest(http.MethodPost, endpoint+"/?restype=service&comp=userdelegationkey", strings.NewReader(body))
	must(t, err)
	at, err := tok.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{"https://storage.azure.com/.default"}})
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+at.Token)
	req.Header.Set("x-ms-version", "2026-06-06")
	resp, err := hc.Do(req)
	must(t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("Get User Delegation Key: %d %s", resp.StatusCode, out)
	}
	var k udkXML
	must(t, xml.Unmarshal(out, &k))
	return k
}

// fileUDSAS is a user delegation SAS for share (path "" : the share, sr=s;
// else that file, sr=f) signed with k in the layout .NET's
// ShareSasBuilder, Java's ShareSasImplUtil, Python's
// FileSharedAccessSignature and JavaScript's generateFileSASQueryParameters
// sign (written out here, not taken from the server):
// sp st se res skoid sktid skt ske sks skv skdutid sduoid sip spr sv rscc rscd rsce rscl rsct.
func fileUDSAS(t *testing.T, k udkXML, sv, shareName, path, perms, sduoid string, expiry time.Time) string {
	t.Helper()
	sr, res := "s", "/file/"+app.DevAccount+"/"+shareName
	if path != "" {
		sr, res = "f", res+"/"+path
	}
	se := expiry.UTC().Format(time.RFC3339)
	sts := strings.Join([]string{perms, "", se, res, k.SignedOid, k.SignedTid, k.SignedStart, k.SignedExpiry, k.SignedService, k.SignedVersion,
		k.SignedDelegatedUserTid, sduoid, "", "https", sv, "", "", "", "", ""}, "\n")
	key, err := base64.StdEncoding.DecodeString(k.Value)
	must(t, err)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sts))
	q := url.Values{"sv": {sv}, "sr": {sr}, "sp": {perms}, "se": {se}, "spr": {"https"},
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

// TestSV2026FileUserDelegationSAS: user delegation SAS for Azure Files
// (2026-02-06: azfile 1.5.4 "Added support for User Delegation SAS",
// azure-storage-file-share 12.24.0b1 get_user_delegation_key; the
// JavaScript SDK's recorded storage-file-share test/node/sas.spec.ts
// "ShareClient.generateUserDelegationSasUrl should work" runs one against
// the service). Get User Delegation Key answers on the File endpoint
// (azfile's GetUserDelegationCredential) with a key for sks "f"; a share
// or file SAS signed with it authorizes exactly what it grants through
// the azfile clients; a tampered token, a Blob key, an old sv and Shared
// Key callers of Get User Delegation Key are refused; a SAS bound to a
// user (sduoid) needs that user's token. azfile 1.7.1's own
// SignWithUserDelegation signs another layout (saoid, suoid, scid, sr and
// two empty fields, as for a blob) than the other four SDKs, and is
// refused as a signature mismatch. Fails before the change: every user
// delegation SAS on the File endpoint was 403 and Get User Delegation Key
// was not served there.
func TestSV2026FileUserDelegationSAS(t *testing.T) {
	a, opts := startTLS(t, true)
	ctx := context.Background()
	hc := opts.Transport.(*http.Client)
	pu, _ := url.Parse(a.FileURL)
	owner := userToken{oid: "00000000-0000-0000-0000-0000000000a1", tid: "72f988bf-86f1-41af-91ab-2d7cd011db47"}
	user := userToken{oid: "00000000-0000-0000-0000-0000000000b2", tid: owner.tid}
	intent := to.Ptr(service.ShareTokenIntentBackup)
	svc, err := service.NewClient("https://"+app.DevAccount+".file.localhost:"+pu.Port()+"/", owner,
		&service.ClientOptions{ClientOptions: productionStyle(t, opts, pu.Host), FileRequestIntent: intent})
	must(t, err)
	_, err = svc.CreateShare(ctx, "udshare", nil)
	must(t, err)

	// The SDK's Get User Delegation Key on the File endpoint.
	now := time.Now().UTC()
	expiry := now.Add(time.Hour)
	udc, err := svc.GetUserDelegationCredential(ctx, service.KeyInfo{Start: to.Ptr(now.Add(-time.Minute).Format(time.RFC3339)), Expiry: to.Ptr(expiry.Format(time.RFC3339))}, nil)
	must(t, err)
	k := getUDK(t, hc, a.FileURL, owner, expiry, "")
	if k.SignedService != "f" || k.SignedOid != owner.oid || k.SignedTid != owner.tid {
		t.Fatalf("key %+v", k)
	}
	// Shared Key cannot get one, as on the Blob endpoint.
	cred, err := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	skc, err := service.NewClientWithSharedKeyCredential(a.FileURL, cred, &service.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = skc.GetUserDelegationCredential(ctx, service.KeyInfo{Expiry: to.Ptr(expiry.Format(time.RFC3339))}, nil)
	wantFileCode(t, err, 403, fileerror.AuthenticationFailed)

	const sv = "2026-02-06"
	shareSAS := fileUDSAS(t, k, sv, "udshare", "", "rcwl", "", now.Add(30*time.Minute))
	sc, err := share.NewClientWithNoCredential(a.FileURL+"/udshare?"+shareSAS, &share.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = sc.NewDirectoryClient("d").Create(ctx, nil)
	must(t, err)
	fc := sc.NewDirectoryClient("d").NewFileClient("f")
	payload := []byte("delegated")
	_, err = fc.Create(ctx, int64(len(payload)), nil)
	must(t, err)
	_, err = fc.UploadRange(ctx, 0, body(payload), nil)
	must(t, err)
	dl, err := fc.DownloadStream(ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(dl.Body)
	dl.Body.Close()
	if !bytes.Equal(got, payload) {
		t.Fatalf("read %q", got)
	}
	page, err := sc.NewRootDirectoryClient().NewListFilesAndDirectoriesPager(nil).NextPage(ctx)
	must(t, err)
	if len(page.Segment.Directories) != 1 || *page.Segment.Directories[0].Name != "d" {
		t.Fatalf("list %+v", page.Segment)
	}
	// No delete in the token.
	_, err = fc.Delete(ctx, nil)
	wantFileCode(t, err, 403, fileerror.AuthorizationPermissionMismatch)

	// A file SAS reaches that file only.
	fileSAS := fileUDSAS(t, k, sv, "udshare", "d/f", "r", "", now.Add(30*time.Minute))
	rc, err := file.NewClientWithNoCredential(a.FileURL+"/udshare/d/f?"+fileSAS, &file.ClientOptions{ClientOptions: opts})
	must(t, err)
	p, err := rc.GetProperties(ctx, nil)
	must(t, err)
	if *p.ContentLength != int64(len(payload)) {
		t.Fatalf("length %d", *p.ContentLength)
	}
	_, err = rc.SetMetadata(ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"a": to.Ptr("b")}})
	wantFileCode(t, err, 403, fileerror.AuthorizationPermissionMismatch)
	other, err := file.NewClientWithNoCredential(a.FileURL+"/udshare/d/g?"+fileSAS, &file.ClientOptions{ClientOptions: opts})
	must(t, err)
	_, err = other.GetProperties(ctx, nil)
	wantFileCode(t, err, 403, fileerror.AuthenticationFailed)

	refused := func(what, token string) {
		t.Helper()
		c, err := file.NewClientWithNoCredential(a.FileURL+"/udshare/d/f?"+token, &file.ClientOptions{ClientOptions: opts})
		must(t, err)
		_, err = c.GetProperties(ctx, nil)
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		wantFileCode(t, err, 403, fileerror.AuthenticationFailed)
	}
	refused("tampered", strings.Replace(fileSAS, "sp=r", "sp=rw", 1))
	refused("sv before 2025-07-05", fileUDSAS(t, k, "2025-05-05", "udshare", "d/f", "r", "", now.Add(30*time.Minute)))
	refused("blob key", fileUDSAS(t, getUDK(t, hc, a.BlobURL, owner, expiry, ""), sv, "udshare", "d/f", "r", "", now.Add(30*time.Minute)))
	// azfile's own signer: its layout is not the one Azure's other SDKs sign.
	qp, err := sas.SignatureValues{Protocol: sas.ProtocolHTTPS, ExpiryTime: now.Add(30 * time.Minute), Permissions: (&sas.FilePermissions{Read: true}).String(),
		ShareName: "udshare", FilePath: "d/f"}.SignWithUserDelegation(udc)
	must(t, err)
	refused("azfile SignWithUserDelegation", qp.Encode())

	// Bound to a user (sduoid): with that user's token only.
	bound := fileUDSAS(t, k, sv, "udshare", "d/f", "r", user.oid, now.Add(30*time.Minute))
	refused("sduoid without a token", bound)
	bc, err := file.NewClient(a.FileURL+"/udshare/d/f?"+bound, user, &file.ClientOptions{ClientOptions: opts, FileRequestIntent: intent})
	must(t, err)
	_, err = bc.GetProperties(ctx, nil)
	must(t, err)
	oc, err := file.NewClient(a.FileURL+"/udshare/d/f?"+bound, owner, &file.ClientOptions{ClientOptions: opts, FileRequestIntent: intent})
	must(t, err)
	_, err = oc.GetProperties(ctx, nil)
	wantFileCode(t, err, 403, fileerror.AuthenticationFailed)
}
