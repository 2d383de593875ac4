package hostile

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
)

// blobSAS signs a service SAS for container cont (and blob, if set) of
// acct with key, read permission, valid from an hour ago until expiry.
func blobSAS(t *testing.T, acct string, key []byte, cont, blob string, expiry time.Time) url.Values {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential(acct, b64(key))
	if err != nil {
		t.Fatal(err)
	}
	v := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ContainerName: cont, BlobName: blob,
		Permissions: "r", StartTime: time.Now().Add(-time.Hour), ExpiryTime: expiry}
	if blob == "" {
		v.Permissions = (&sas.ContainerPermissions{Read: true, List: true}).String()
	}
	qp, err := v.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	q, err := url.ParseQuery(qp.Encode())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestAuthTricks: forged, replayed, expired and misdirected credentials
// are refused with 403 AuthenticationFailed (or the code Azure gives the
// case), never served; the server stays responsive.
func TestAuthTricks(t *testing.T) {
	s := start(t, nil)
	dev := app.DevAccount
	blob := "/" + dev + "/cont/b"
	get := func(target string, hdr http.Header, signAs string) reply {
		return s.do("blob", "GET", target, hdr, nil, signAs)
	}
	// A correct request passes: the probes differ from it in one thing.
	s.must(get(blob, nil, dev), 200)

	withAuth := func(v string) http.Header {
		return http.Header{"Authorization": {v}, "X-Ms-Date": {time.Now().UTC().Format(http.TimeFormat)}}
	}
	signedWith := func(key []byte, acct, target string, hdr http.Header) http.Header {
		if hdr == nil {
			hdr = http.Header{}
		}
		hdr.Set("X-Ms-Date", time.Now().UTC().Format(http.TimeFormat))
		hdr.Set("X-Ms-Version", version)
		r, _ := http.NewRequest("GET", "http://"+s.addr["blob"]+target, nil)
		r.Header = hdr.Clone()
		r.RequestURI = target
		sts := auth.StringToSign(r, auth.Blob, auth.SharedKey, acct, auth.CultureOrder)
		hdr.Set("Authorization", "SharedKey "+acct+":"+auth.ComputeSignature(key, sts))
		return hdr
	}
	wrongKey := make([]byte, 64)
	for _, tc := range []struct {
		name   string
		target string
		hdr    http.Header
		signAs string
		status int
		code   string
	}{
		{"wrong key", blob, signedWith(wrongKey, dev, blob, nil), "", 403, "AuthenticationFailed"},
		{"signature not base64", blob, withAuth("SharedKey " + dev + ":!!!not-base64!!!"), "", 403, "AuthenticationFailed"},
		// A malformed Authorization header is 400 InvalidAuthenticationInfo
		// (Common REST API error codes).
		{"empty signature", blob, withAuth("SharedKey " + dev + ":"), "", 400, "InvalidAuthenticationInfo"},
		{"unknown scheme", blob, withAuth("Basic ZGV2OmtleQ=="), "", 400, "InvalidAuthenticationInfo"},
		// The other account's valid signature presented for the dev
		// account's blob: the key of the URL's account must sign.
		{"Shared Key of another account", blob, signedWith(otherKey, otherAccount, blob, nil), "", 403, "AuthenticationFailed"},
		{"Shared Key naming another account, signed with its key, for this path", blob, signedWith(otherKey, otherAccount, "/"+otherAccount+"/cont/b", nil), "", 403, "AuthenticationFailed"},
		{"no date", blob, http.Header{"Authorization": {"SharedKey " + dev + ":" + auth.ComputeSignature(devKey(), "GET\n")}}, "", 403, "AuthenticationFailed"},
		{"replayed date an hour old", blob, http.Header{"X-Ms-Date": {time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)}}, dev, 403, "AuthenticationFailed"},
		{"date an hour ahead", blob, http.Header{"X-Ms-Date": {time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}}, dev, 403, "AuthenticationFailed"},
		{"unparsable date", blob, http.Header{"X-Ms-Date": {"yesterday"}}, dev, 403, "AuthenticationFailed"},
	} {
		want(t, tc.name, get(tc.target, tc.hdr, tc.signAs), tc.status, tc.code)
	}

	// Shared Access Signatures.
	good := blobSAS(t, dev, devKey(), "cont", "", time.Now().Add(time.Hour))
	want(t, "valid container SAS", get(blob+"?"+good.Encode(), nil, ""), 200, "")
	sasCases := []struct {
		name   string
		target string
		status int
		code   string
	}{
		{"expired SAS", blob + "?" + blobSAS(t, dev, devKey(), "cont", "", time.Now().Add(-time.Minute)).Encode(), 403, "AuthenticationFailed"},
		{"SAS of another container", "/" + dev + "/other/b?" + good.Encode(), 403, "AuthenticationFailed"},
		{"SAS of another blob", "/" + dev + "/cont/x?" + blobSAS(t, dev, devKey(), "cont", "b", time.Now().Add(time.Hour)).Encode(), 403, "AuthenticationFailed"},
		{"SAS signed by another account", blob + "?" + blobSAS(t, otherAccount, otherKey, "cont", "", time.Now().Add(time.Hour)).Encode(), 403, "AuthenticationFailed"},
		{"SAS of this account used on another", "/" + otherAccount + "/cont/b?" + good.Encode(), 403, "AuthenticationFailed"},
	}
	for _, field := range []struct{ name, value string }{
		{"sp", "racwdl"}, // more permissions
		{"se", time.Now().Add(48 * time.Hour).UTC().Format("2006-01-02T15:04:05Z")}, // later expiry
		{"st", time.Now().Add(-48 * time.Hour).UTC().Format("2006-01-02T15:04:05Z")},
		{"sr", "b"},
		{"spr", "http"},
		{"sig", strings.Repeat("A", 43) + "="},
	} {
		q := url.Values{}
		for k, v := range good {
			q[k] = v
		}
		q.Set(field.name, field.value)
		sasCases = append(sasCases, struct {
			name   string
			target string
			status int
			code   string
		}{"SAS with " + field.name + " tampered", blob + "?" + q.Encode(), 403, "AuthenticationFailed"})
	}
	for _, tc := range sasCases {
		want(t, tc.name, get(tc.target, nil, ""), tc.status, tc.code)
	}
	// A SAS may not write more than it grants: Put Blob with a read SAS.
	want(t, "write with a read SAS", s.do("blob", "PUT", blob+"?"+good.Encode(), http.Header{"X-Ms-Blob-Type": {"BlockBlob"}}, []byte("overwritten"), ""), 403, "AuthorizationPermissionMismatch")
	s.alive()
}
