package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	bsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	blobservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	fsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	fileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// sendRaw sends a request authorized only by what u and hdr carry and
// returns its status and x-ms-error-code.
func sendRaw(t *testing.T, method, u string, hdr map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	must(t, err)
	req.Header.Set("x-ms-version", "2025-01-05")
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("x-ms-error-code")
}

// TestSecondResourceAuthorization audits every operation that names a
// resource besides its URL's: with a SAS that authorizes only the
// destination (the attacker's own blob or file, every letter), a source
// the caller may not read is refused and nothing is written or moved.
// Copy Blob, Copy Blob From URL, Put Blob From URL, Put Block From URL,
// Append Block From URL and Put Page From URL from a private blob or a
// file; Copy File and Put Range From URL from a private file or a blob;
// Rename File and Rename Directory from another path; the attacker's SAS replayed on the
// source fails its signature, a source SAS without read is refused; and
// a Blob Batch authorized by a SAS runs each sub-request on its own
// authorization (none: 401; another blob's SAS: 403), deleting nothing.
// These operations were already safe: the test keeps them so. (The
// Data Lake rename and undelete sources: TestDLRenameSourceAuthorization,
// TestDLUndeleteSourceAuthorization.)
func TestSecondResourceAuthorization(t *testing.T) {
	a, _ := startApp4(t, 0, -1, -1, 0)
	ctx := context.Background()
	bcred, err := blobservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bsvc, err := blobservice.NewClientWithSharedKeyCredential(a.BlobURL, bcred, nil)
	must(t, err)
	fcred, err := fileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	fsvc, err := fileservice.NewClientWithSharedKeyCredential(a.FileURL, fcred, nil)
	must(t, err)
	for _, c := range []string{"priv", "atk"} {
		_, err = bsvc.NewContainerClient(c).Create(ctx, nil)
		must(t, err)
	}
	secret := []byte("victim's data, 512 bytes long...")
	secret = bytes.Repeat(secret, 512/len(secret))
	_, err = bsvc.NewContainerClient("priv").NewBlockBlobClient("victim").UploadBuffer(ctx, secret, nil)
	must(t, err)
	// The attacker's append and page blobs, theirs to write.
	_, err = bsvc.NewContainerClient("atk").NewAppendBlobClient("app").Create(ctx, nil)
	must(t, err)
	_, err = bsvc.NewContainerClient("atk").NewPageBlobClient("page").Create(ctx, 512, nil)
	must(t, err)
	share := fsvc.NewShareClient("share")
	_, err = share.Create(ctx, nil)
	must(t, err)
	vf := share.NewRootDirectoryClient().NewFileClient("victim")
	_, err = vf.Create(ctx, int64(len(secret)), nil)
	must(t, err)
	_, err = vf.UploadRange(ctx, 0, bxBody(secret), nil)
	must(t, err)
	af := share.NewRootDirectoryClient().NewFileClient("atkfile")
	_, err = af.Create(ctx, 512, nil)
	must(t, err)

	blobSAS := func(c, b, perms string) string {
		q, err := bsas.BlobSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().UTC().Add(time.Hour),
			ContainerName: c, BlobName: b, Permissions: perms}.SignWithSharedKey(bcred)
		must(t, err)
		return q.Encode()
	}
	fileSAS := func(f, perms string) string {
		q, err := fsas.SignatureValues{Protocol: fsas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().UTC().Add(time.Hour),
			ShareName: "share", FilePath: f, Permissions: perms}.SignWithSharedKey(fcred)
		must(t, err)
		return q.Encode()
	}
	all := "racwd"
	victimBlob := a.BlobURL + "/priv/victim"
	victimFile := a.FileURL + "/share/victim"
	atkSAS := blobSAS("atk", "x", all)
	sources := []struct{ name, url string }{
		{"private blob, no SAS", victimBlob},
		{"private blob, the destination's SAS replayed", victimBlob + "?" + atkSAS},
		{"private blob, a SAS without read", victimBlob + "?" + blobSAS("priv", "victim", "w")},
		{"file, no SAS", victimFile},
		{"file, a SAS without read", victimFile + "?" + fileSAS("victim", "w")},
	}
	blockID := base64.StdEncoding.EncodeToString([]byte("blk-0001"))
	blobOps := []struct {
		name, path string
		hdr        map[string]string
	}{
		{"Copy Blob", "/atk/x", nil},
		{"Copy Blob From URL", "/atk/x", map[string]string{"x-ms-requires-sync": "true"}},
		{"Put Blob From URL", "/atk/x", map[string]string{"x-ms-blob-type": "BlockBlob"}},
		{"Put Block From URL", "/atk/x?comp=block&blockid=" + blockID, nil},
		{"Append Block From URL", "/atk/app?comp=appendblock", nil},
		{"Put Page From URL", "/atk/page?comp=page", map[string]string{"x-ms-page-write": "update", "x-ms-range": "bytes=0-511", "x-ms-source-range": "bytes=0-511"}},
	}
	for _, op := range blobOps {
		b := op.path[len("/atk/"):]
		if i := strings.IndexByte(b, '?'); i >= 0 {
			b = b[:i]
		}
		sep := "?"
		if strings.Contains(op.path, "?") {
			sep = "&"
		}
		u := a.BlobURL + op.path + sep + blobSAS("atk", b, all)
		for _, src := range sources {
			hdr := map[string]string{"x-ms-copy-source": src.url}
			for k, v := range op.hdr {
				hdr[k] = v
			}
			st, code := sendRaw(t, http.MethodPut, u, hdr, nil)
			if (st != http.StatusUnauthorized && st != http.StatusForbidden) || code != "CannotVerifyCopySource" {
				t.Errorf("%s from %s: %d %s, want 401 or 403 CannotVerifyCopySource", op.name, src.name, st, code)
			}
		}
	}
	// Nothing reached the attacker's blobs.
	if _, err := bsvc.NewContainerClient("atk").NewBlobClient("x").GetProperties(ctx, nil); err == nil {
		t.Error("a refused copy created atk/x")
	}
	for _, b := range []string{"app", "page"} {
		resp, err := bsvc.NewContainerClient("atk").NewBlobClient(b).DownloadStream(ctx, nil)
		must(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(got, secret[:32]) {
			t.Errorf("a refused write copied the victim into atk/%s", b)
		}
	}

	// The File service: Copy File and Put Range From URL into the
	// attacker's file, Rename File onto it.
	fileOps := []struct {
		name, query string
		hdr         map[string]string
	}{
		{"Copy File", "", nil},
		{"Put Range From URL", "comp=range&", map[string]string{"x-ms-write": "update", "x-ms-range": "bytes=0-511", "x-ms-source-range": "bytes=0-511"}},
	}
	fsources := []struct{ name, url string }{
		{"private file, no SAS", victimFile},
		{"private file, the destination's SAS replayed", victimFile + "?" + fileSAS("atkfile", "rcwd")},
		{"private file, a SAS without read", victimFile + "?" + fileSAS("victim", "w")},
		{"private blob, no SAS", victimBlob},
	}
	for _, op := range fileOps {
		u := a.FileURL + "/share/atkfile?" + op.query + fileSAS("atkfile", "rcwd")
		for _, src := range fsources {
			hdr := map[string]string{"x-ms-copy-source": src.url}
			for k, v := range op.hdr {
				hdr[k] = v
			}
			st, code := sendRaw(t, http.MethodPut, u, hdr, nil)
			if (st != http.StatusUnauthorized && st != http.StatusForbidden) || code != "CannotVerifyCopySource" {
				t.Errorf("%s from %s: %d %s, want 401 or 403 CannotVerifyCopySource", op.name, src.name, st, code)
			}
		}
	}
	for _, src := range []struct{ name, v string }{
		{"no SAS", victimFile},
		{"the destination's SAS replayed", victimFile + "?" + fileSAS("atkfile2", "rcwd")},
	} {
		st, code := sendRaw(t, http.MethodPut, a.FileURL+"/share/atkfile2?comp=rename&"+fileSAS("atkfile2", "rcwd"),
			map[string]string{"x-ms-file-rename-source": src.v}, nil)
		if st != http.StatusForbidden || code != "AuthenticationFailed" {
			t.Errorf("Rename File from %s: %d %s, want 403 AuthenticationFailed", src.name, st, code)
		}
	}
	_, err = share.NewDirectoryClient("vdir").Create(ctx, nil)
	must(t, err)
	for _, src := range []struct{ name, v string }{
		{"no SAS", a.FileURL + "/share/vdir"},
		{"the destination's SAS replayed", a.FileURL + "/share/vdir?" + fileSAS("atkdir", "rcwd")},
	} {
		st, code := sendRaw(t, http.MethodPut, a.FileURL+"/share/atkdir?restype=directory&comp=rename&"+fileSAS("atkdir", "rcwd"),
			map[string]string{"x-ms-file-rename-source": src.v}, nil)
		if st != http.StatusForbidden || code != "AuthenticationFailed" {
			t.Errorf("Rename Directory from %s: %d %s, want 403 AuthenticationFailed", src.name, st, code)
		}
	}
	if _, err := share.NewDirectoryClient("vdir").GetProperties(ctx, nil); err != nil {
		t.Errorf("the victim directory moved: %v", err)
	}
	resp, err := vf.DownloadStream(ctx, nil)
	must(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, secret) {
		t.Error("the victim file changed")
	}
	resp2, err := af.DownloadStream(ctx, nil)
	must(t, err)
	got, _ = io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if bytes.Contains(got, secret[:32]) {
		t.Error("a refused write copied the victim into atkfile")
	}

	// Blob Batch: the batch's SAS authorizes the batch, not its parts.
	batch := func(subs []string) []string {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		for i, s := range subs {
			pw, err := mw.CreatePart(map[string][]string{"Content-Type": {"application/http"}, "Content-Transfer-Encoding": {"binary"}, "Content-ID": {fmt.Sprint(i)}})
			must(t, err)
			_, _ = io.WriteString(pw, s)
		}
		must(t, mw.Close())
		u := a.BlobURL + "/atk?restype=container&comp=batch&" + blobSAS("atk", "", "d")
		req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body.Bytes()))
		must(t, err)
		req.Header.Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
		req.Header.Set("x-ms-version", "2025-01-05")
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("batch: %d %s", resp.StatusCode, raw)
		}
		return subStatuses(t, resp.Header.Get("Content-Type"), raw)
	}
	_, err = bsvc.NewContainerClient("atk").NewBlockBlobClient("y").UploadBuffer(ctx, []byte("y"), nil)
	must(t, err)
	sub := func(path string) string {
		return "DELETE " + path + " HTTP/1.1\r\nx-ms-date: " + time.Now().UTC().Format(http.TimeFormat) + "\r\nContent-Length: 0\r\n\r\n"
	}
	acct := "/" + app.DevAccount
	for _, c := range []struct{ name, sub, want string }{
		{"a sub-request without authorization", sub(acct + "/atk/y"), "[0:401:NoAuthenticationInformation]"},
		{"a sub-request with another blob's SAS", sub(acct + "/atk/y?" + blobSAS("atk", "x", "d")), "[0:403:AuthenticationFailed]"},
		{"a sub-request with a SAS without d", sub(acct + "/atk/y?" + blobSAS("atk", "y", "r")), "[0:403:AuthorizationPermissionMismatch]"},
		{"a sub-request outside the batch's container", sub(acct + "/priv/victim?" + atkSAS), "[:400:InvalidInput]"},
	} {
		if got := fmt.Sprint(batch([]string{c.sub})); got != c.want {
			t.Errorf("batch with %s: %s, want %s", c.name, got, c.want)
		}
	}
	for _, p := range [][2]string{{"atk", "y"}, {"priv", "victim"}} {
		if _, err := bsvc.NewContainerClient(p[0]).NewBlobClient(p[1]).GetProperties(ctx, nil); err != nil {
			t.Errorf("%s/%s deleted by an unauthorized sub-request: %v", p[0], p[1], err)
		}
	}
	// The same batch with a sub-request carrying the blob's own SAS
	// deletes it: the refusals above are the authorization's.
	if got := fmt.Sprint(batch([]string{sub(acct + "/atk/y?" + blobSAS("atk", "y", "d"))})); got != "[0:202:]" {
		t.Errorf("authorized sub-request: %s", got)
	}

	// Every operation above succeeds with a source SAS that grants read:
	// the refusals were the source's authorization, not a bad request.
	for _, op := range blobOps {
		b := op.path[len("/atk/"):]
		if i := strings.IndexByte(b, '?'); i >= 0 {
			b = b[:i]
		}
		sep := "?"
		if strings.Contains(op.path, "?") {
			sep = "&"
		}
		hdr := map[string]string{"x-ms-copy-source": victimBlob + "?" + blobSAS("priv", "victim", "r")}
		for k, v := range op.hdr {
			hdr[k] = v
		}
		if st, code := sendRaw(t, http.MethodPut, a.BlobURL+op.path+sep+blobSAS("atk", b, all), hdr, nil); st >= 300 {
			t.Errorf("%s with a source SAS: %d %s", op.name, st, code)
		}
	}
	for _, op := range fileOps {
		hdr := map[string]string{"x-ms-copy-source": victimFile + "?" + fileSAS("victim", "r")}
		for k, v := range op.hdr {
			hdr[k] = v
		}
		if st, code := sendRaw(t, http.MethodPut, a.FileURL+"/share/atkfile?"+op.query+fileSAS("atkfile", "rcwd"), hdr, nil); st >= 300 {
			t.Errorf("%s with a source SAS: %d %s", op.name, st, code)
		}
	}
	if st, code := sendRaw(t, http.MethodPut, a.FileURL+"/share/atkfile2?comp=rename&"+fileSAS("atkfile2", "rcwd"),
		map[string]string{"x-ms-file-rename-source": victimFile + "?" + fileSAS("victim", "rwd")}, nil); st >= 300 {
		t.Errorf("Rename File with a source SAS: %d %s", st, code)
	}
}

// subStatuses reads a batch answer's parts as "id:status:code".
func subStatuses(t *testing.T, ct string, raw []byte) []string {
	t.Helper()
	_, params, err := mime.ParseMediaType(ct)
	must(t, err)
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	var out []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		must(t, err)
		b, _ := io.ReadAll(p)
		b = append(b, '\n')
		sr, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
		must(t, err)
		out = append(out, fmt.Sprintf("%s:%d:%s", p.Header.Get("Content-ID"), sr.StatusCode, sr.Header.Get("x-ms-error-code")))
	}
	return out
}
