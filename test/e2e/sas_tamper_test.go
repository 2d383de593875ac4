package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	bsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	blobservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"
	fsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/sas"
	fileservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	qsas "github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestSASTamperHTTP is the SAS tamper matrix over HTTP: for a service SAS
// and an account SAS of each service (built by that SDK's own SAS
// builder), every signed field altered, every field removed, and the
// signature altered, on a write (Put Blob, Put Message, Insert Entity,
// Create File): each is refused with 403 (401 NoAuthenticationInformation
// without sig, when the query is no SAS at all) and nothing is written. The untampered token then writes, which shows the request
// itself was valid.
func TestSASTamperHTTP(t *testing.T) {
	a, _ := startApp4(t, 0, 0, 0, 0)
	ctx := context.Background()
	exp := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)

	// The resources the writes go to, created with Shared Key.
	bcred, err := blobservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	bsvc, err := blobservice.NewClientWithSharedKeyCredential(a.BlobURL, bcred, nil)
	must(t, err)
	_, err = bsvc.NewContainerClient("tamper").Create(ctx, nil)
	must(t, err)
	qcred, err := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	qsvc, err := azqueue.NewServiceClientWithSharedKeyCredential(a.QueueURL, qcred, nil)
	must(t, err)
	_, err = qsvc.CreateQueue(ctx, "tamper", nil)
	must(t, err)
	tcred, err := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	tsvc, err := aztables.NewServiceClientWithSharedKey(a.TableURL, tcred, nil)
	must(t, err)
	_, err = tsvc.CreateTable(ctx, "tamper", nil)
	must(t, err)
	fcred, err := fileservice.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	fsvc, err := fileservice.NewClientWithSharedKeyCredential(a.FileURL, fcred, nil)
	must(t, err)
	_, err = fsvc.NewShareClient("tamper").Create(ctx, nil)
	must(t, err)

	type target struct {
		name  string
		token string // the untampered SAS query
		// write sends the write with query tok and returns the status
		// and error code; written reports whether anything was written.
		write   func(tok string) (int, string)
		written func() bool
	}
	send := func(method, u string, hdr map[string]string, body []byte) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, u, bytes.NewReader(body))
		must(t, err)
		req.Header.Set("x-ms-version", "2025-01-05")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("x-ms-error-code")
	}

	blobSvc, err := bsas.BlobSignatureValues{Protocol: bsas.ProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: exp,
		ContainerName: "tamper", Permissions: (&bsas.ContainerPermissions{Read: true, Create: true, Write: true}).String()}.SignWithSharedKey(bcred)
	must(t, err)
	// This one is also held to the client's address (sip).
	blobAcct := accountSAS(t, "blob", accountSASValues{Start: start, Expiry: exp, Perms: "rwc", ResourceTypes: "o", IP: net.ParseIP("127.0.0.1")})
	blobWrite := func(tok string) (int, string) {
		return send(http.MethodPut, a.BlobURL+"/tamper/b?"+tok, map[string]string{"x-ms-blob-type": "BlockBlob"}, []byte("x"))
	}
	blobWritten := func() bool {
		_, err := bsvc.NewContainerClient("tamper").NewBlobClient("b").GetProperties(ctx, nil)
		return err == nil
	}

	queueSvc, err := qsas.QueueSignatureValues{Protocol: qsas.ProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: exp,
		QueueName: "tamper", Permissions: (&qsas.QueuePermissions{Read: true, Add: true}).String()}.SignWithSharedKey(qcred)
	must(t, err)
	queueAcct := accountSAS(t, "queue", accountSASValues{Start: start, Expiry: exp, Perms: "ra", ResourceTypes: "o"})
	queueWrite := func(tok string) (int, string) {
		return send(http.MethodPost, a.QueueURL+"/tamper/messages?"+tok, nil, []byte("<QueueMessage><MessageText>x</MessageText></QueueMessage>"))
	}
	queueWritten := func() bool {
		p, err := qsvc.NewQueueClient("tamper").PeekMessages(ctx, nil)
		must(t, err)
		return len(p.Messages) > 0
	}

	tableSvcURL, err := aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: exp,
		TableName: "tamper", Permissions: (&aztables.SASPermissions{Read: true, Add: true}).String()}.Sign(tcred)
	must(t, err)
	tableAcct := accountSAS(t, "table", accountSASValues{Start: start, Expiry: exp, Perms: "ra", ResourceTypes: "o"})
	tableWrite := func(tok string) (int, string) {
		return send(http.MethodPost, a.TableURL+"/tamper?"+tok, map[string]string{
			"Content-Type": "application/json", "Accept": "application/json;odata=nometadata", "Prefer": "return-no-content",
		}, []byte(`{"PartitionKey":"p","RowKey":"r","V":1}`))
	}
	tableWritten := func() bool {
		_, err := tsvc.NewClient("tamper").GetEntity(ctx, "p", "r", nil)
		return err == nil
	}

	fileSvc, err := fsas.SignatureValues{Protocol: fsas.ProtocolHTTPSandHTTP, StartTime: start, ExpiryTime: exp,
		ShareName: "tamper", Permissions: (&fsas.SharePermissions{Read: true, Create: true, Write: true}).String()}.SignWithSharedKey(fcred)
	must(t, err)
	fileAcct := accountSAS(t, "file", accountSASValues{Start: start, Expiry: exp, Perms: "rwc", ResourceTypes: "o"})
	fileWrite := func(tok string) (int, string) {
		return send(http.MethodPut, a.FileURL+"/tamper/f?"+tok, map[string]string{
			"x-ms-type": "file", "x-ms-content-length": "1",
			"x-ms-file-attributes": "None", "x-ms-file-creation-time": "now", "x-ms-file-last-write-time": "now", "x-ms-file-permission": "inherit",
		}, nil)
	}
	fileWritten := func() bool {
		_, err := fsvc.NewShareClient("tamper").NewRootDirectoryClient().NewFileClient("f").GetProperties(ctx, nil)
		return err == nil
	}

	tableSvc := tableSvcURL // aztables returns the encoded query itself
	targets := []target{
		{"blob service SAS", blobSvc.Encode(), blobWrite, blobWritten},
		{"blob account SAS", blobAcct, blobWrite, blobWritten},
		{"queue service SAS", queueSvc.Encode(), queueWrite, queueWritten},
		{"queue account SAS", queueAcct, queueWrite, queueWritten},
		{"table service SAS", tableSvc, tableWrite, tableWritten},
		{"table account SAS", tableAcct, tableWrite, tableWritten},
		{"file service SAS", fileSvc.Encode(), fileWrite, fileWritten},
		{"file account SAS", fileAcct, fileWrite, fileWritten},
	}
	cases := 0
	for _, tg := range targets {
		q, err := url.ParseQuery(tg.token)
		must(t, err)
		var fields []string
		for k := range q {
			fields = append(fields, k)
		}
		sort.Strings(fields)
		if len(fields) < 5 {
			t.Fatalf("%s: only fields %v", tg.name, fields)
		}
		try := func(what string, m url.Values, anonymous bool) {
			t.Helper()
			cases++
			status, code := tg.write(m.Encode())
			ok := status == http.StatusForbidden
			if anonymous {
				// Without sig the query is no SAS: the request is
				// anonymous, which no write accepts.
				ok = status == http.StatusUnauthorized && code == "NoAuthenticationInformation"
			}
			if !ok {
				t.Errorf("%s, %s: %d %s, want 403", tg.name, what, status, code)
			}
			if tg.written() {
				t.Fatalf("%s, %s: a refused request wrote", tg.name, what)
			}
		}
		for _, k := range fields {
			alt := cloneValues(q)
			alt.Set(k, tamperField(k, q.Get(k)))
			try("altered "+k+"="+alt.Get(k), alt, false)
			rm := cloneValues(q)
			rm.Del(k)
			try("without "+k, rm, k == "sig")
		}
		sig, _ := base64.StdEncoding.DecodeString(q.Get("sig"))
		sig[len(sig)/2] ^= 0x40
		alt := cloneValues(q)
		alt.Set("sig", base64.StdEncoding.EncodeToString(sig))
		try("signature bit flipped", alt, false)
		// The token as signed writes.
		if status, code := tg.write(tg.token); status/100 != 2 {
			t.Fatalf("%s untampered: %d %s", tg.name, status, code)
		}
		if !tg.written() {
			t.Fatalf("%s untampered: nothing written", tg.name)
		}
		// Clear the write for the next token.
		switch {
		case strings.HasPrefix(tg.name, "blob"):
			_, err = bsvc.NewContainerClient("tamper").NewBlobClient("b").Delete(ctx, nil)
		case strings.HasPrefix(tg.name, "queue"):
			_, err = qsvc.NewQueueClient("tamper").ClearMessages(ctx, nil)
		case strings.HasPrefix(tg.name, "table"):
			_, err = tsvc.NewClient("tamper").DeleteEntity(ctx, "p", "r", nil)
		case strings.HasPrefix(tg.name, "file"):
			_, err = fsvc.NewShareClient("tamper").NewRootDirectoryClient().NewFileClient("f").Delete(ctx, nil)
		}
		must(t, err)
	}
	if cases < 100 {
		t.Errorf("only %d tampered requests", cases)
	}
	t.Logf("%d tampered requests refused, nothing written", cases)
}

func cloneValues(q url.Values) url.Values {
	m := url.Values{}
	for k, v := range q {
		m[k] = append([]string(nil), v...)
	}
	return m
}

// tamperField returns another well-formed value for SAS field k.
func tamperField(k, v string) string {
	switch k {
	case "st", "se":
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return v + "x"
		}
		return t.Add(time.Second).Format(time.RFC3339)
	case "sv":
		if v == "2020-02-10" {
			return "2019-12-12"
		}
		return "2020-02-10"
	case "sp":
		if len(v) > 1 {
			return v[:len(v)-1] // a narrower grant, as a forger would not try, but signed differently
		}
		return v + "r"
	case "ss":
		if v == "bqtf" {
			return "b"
		}
		return "bqtf"
	case "srt":
		if v == "sco" {
			return "o"
		}
		return "sco"
	case "spr":
		if v == "https,http" {
			return "https"
		}
		return "https,http"
	case "sr":
		switch v {
		case "c":
			return "b"
		case "s":
			return "f"
		}
		return "c"
	case "sip":
		return "10.0.0.5"
	case "tn":
		return v + "x"
	}
	return v + "x"
}
