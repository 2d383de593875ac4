package e2e

import (
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func tbAction(t testing.TB, kind aztables.TransactionType, m map[string]any, ifMatch *azcore.ETag) aztables.TransactionAction {
	return aztables.TransactionAction{ActionType: kind, Entity: tbJSON(t, m), IfMatch: ifMatch}
}

// tbBatchErr asserts a failed SubmitTransaction: the SDK surfaces the
// 202 as a *azcore.ResponseError whose body holds only the failing
// operation, prefixed with its index.
func tbBatchErr(t testing.TB, err error, status int, code, prefix string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want batch failure %d %s, got success", status, code)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want *azcore.ResponseError, got %v", err)
	}
	msg := re.Error()
	if re.StatusCode != http.StatusAccepted || !strings.Contains(msg, fmt.Sprintf("HTTP/1.1 %d ", status)) ||
		!strings.Contains(msg, `"code":"`+code+`"`) || !strings.Contains(msg, `"value":"`+prefix) {
		t.Fatalf("want %d %s %q, got %v", status, code, prefix, msg)
	}
	if n := strings.Count(msg, "HTTP/1.1 "); n != 1 {
		t.Fatalf("failure response holds %d operations: %s", n, msg)
	}
}

func TestTableBatchMixed(t *testing.T) {
	e := tbStart(t)
	c := e.table("batch")
	var adds []aztables.TransactionAction
	for i := 0; i < 5; i++ {
		adds = append(adds, tbAction(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprint(i), "V": i, "Keep": "k"}, nil))
	}
	_, err := c.SubmitTransaction(e.ctx, adds, nil)
	tbMust(t, err)
	_, etag2 := e.tbGet(c, "p", "2")
	_, err = c.SubmitTransaction(e.ctx, []aztables.TransactionAction{
		tbAction(t, aztables.TransactionTypeUpdateMerge, map[string]any{"PartitionKey": "p", "RowKey": "0", "M": "merged"}, nil),
		tbAction(t, aztables.TransactionTypeDelete, map[string]any{"PartitionKey": "p", "RowKey": "1"}, nil),
		tbAction(t, aztables.TransactionTypeUpdateReplace, map[string]any{"PartitionKey": "p", "RowKey": "2", "R": "replaced"}, &etag2),
		tbAction(t, aztables.TransactionTypeInsertReplace, map[string]any{"PartitionKey": "p", "RowKey": "5", "New": 5}, nil),
		tbAction(t, aztables.TransactionTypeInsertMerge, map[string]any{"PartitionKey": "p", "RowKey": "3", "M": "upserted"}, nil),
	}, nil)
	tbMust(t, err)
	all, _ := e.tbList(c, nil)
	if tbRowKeys(all) != "0,2,3,4,5" {
		t.Fatalf("rows %s", tbRowKeys(all))
	}
	if all[0]["M"] != "merged" || all[0]["Keep"] != "k" || all[1]["R"] != "replaced" || all[1]["Keep"] != nil || all[2]["M"] != "upserted" || all[2]["Keep"] != "k" || all[4]["New"] != 5.0 {
		t.Fatalf("after batch %v", all)
	}
	// Every entity written by one batch carries the batch's timestamp.
	if all[0]["Timestamp"] != all[1]["Timestamp"] || all[0]["odata.etag"] != all[4]["odata.etag"] {
		t.Fatalf("batch timestamps differ: %v %v", all[0]["Timestamp"], all[1]["Timestamp"])
	}
	// aztables checks that a transaction is not empty before sending.
	_, err = c.SubmitTransaction(e.ctx, nil, nil)
	if err == nil {
		t.Fatal("empty transaction accepted")
	}
}

func TestTableBatchFailuresApplyNothing(t *testing.T) {
	e := tbStart(t)
	c := e.table("batchfail")
	e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": "exists", "V": 0})
	_, etag := e.tbGet(c, "p", "exists")
	_, err := c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "exists", "V": 1}), &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
	tbMust(t, err)
	stale := etag
	before, _ := e.tbList(c, nil)

	add := func(rk string) aztables.TransactionAction {
		return tbAction(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": rk}, nil)
	}
	cases := []struct {
		name   string
		ops    []aztables.TransactionAction
		status int
		code   string
		prefix string
	}{
		{"insert of an existing entity", []aztables.TransactionAction{add("a"), add("exists"), add("b")}, 409, "EntityAlreadyExists", "1:The specified entity already exists."},
		{"stale If-Match", []aztables.TransactionAction{add("a"), add("b"), tbAction(t, aztables.TransactionTypeUpdateMerge, map[string]any{"PartitionKey": "p", "RowKey": "exists", "V": 9}, &stale)}, 412, "UpdateConditionNotSatisfied", "2:"},
		{"delete of a missing entity", []aztables.TransactionAction{tbAction(t, aztables.TransactionTypeDelete, map[string]any{"PartitionKey": "p", "RowKey": "missing"}, nil), add("a")}, 404, "ResourceNotFound", "0:"},
		{"two partitions", []aztables.TransactionAction{add("a"), tbAction(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "q", "RowKey": "a"}, nil)}, 400, "CommandsInBatchActOnDifferentPartitions", "1:"},
		{"one entity twice", []aztables.TransactionAction{add("a"), add("b"), tbAction(t, aztables.TransactionTypeUpdateMerge, map[string]any{"PartitionKey": "p", "RowKey": "a"}, nil)}, 400, "InvalidDuplicateRow", "2:A command with RowKey 'a'"},
		{"invalid property", []aztables.TransactionAction{add("a"), tbAction(t, aztables.TransactionTypeAdd, map[string]any{"PartitionKey": "p", "RowKey": "b", "bad name": 1}, nil)}, 400, "PropertyNameInvalid", "1:"},
	}
	var hundredOne []aztables.TransactionAction
	for i := 0; i < 101; i++ {
		hundredOne = append(hundredOne, add(fmt.Sprint("n", i)))
	}
	cases = append(cases, struct {
		name   string
		ops    []aztables.TransactionAction
		status int
		code   string
		prefix string
	}{"101 operations", hundredOne, 400, "InvalidInput", "0:The batch request operation exceeds the maximum 100 changes per change set."})
	for _, tc := range cases {
		_, err := c.SubmitTransaction(e.ctx, tc.ops, nil)
		t.Logf("%s", tc.name)
		tbBatchErr(t, err, tc.status, tc.code, tc.prefix)
		after, _ := e.tbList(c, nil)
		if tbRowKeys(after) != tbRowKeys(before) || after[0]["odata.etag"] != before[0]["odata.etag"] {
			t.Fatalf("%s: failed batch left %s (was %s)", tc.name, tbRowKeys(after), tbRowKeys(before))
		}
	}
	// A batch on a missing table.
	_, err = e.svc.NewClient("nosuch").SubmitTransaction(e.ctx, []aztables.TransactionAction{add("a")}, nil)
	tbBatchErr(t, err, 404, "TableNotFound", "0:")
	// Exactly 100 operations is fine.
	_, err = c.SubmitTransaction(e.ctx, hundredOne[:100], nil)
	tbMust(t, err)
}

// tbBatchBody builds a batch request by hand.
func tbBatchBody(t testing.TB, base string, parts []string, changeset bool) (string, []byte) {
	var b strings.Builder
	b.WriteString("--batch_b1\r\n")
	if changeset {
		b.WriteString("Content-Type: multipart/mixed; boundary=changeset_c1\r\n\r\n")
		for _, p := range parts {
			b.WriteString("--changeset_c1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
			b.WriteString(strings.ReplaceAll(p, "BASE", base))
			b.WriteString("\r\n")
		}
		b.WriteString("--changeset_c1--\r\n")
	} else {
		b.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString(strings.ReplaceAll(parts[0], "BASE", base))
		b.WriteString("\r\n")
	}
	b.WriteString("--batch_b1--\r\n")
	return "multipart/mixed; boundary=batch_b1", []byte(b.String())
}

// tbParts splits a batch response into its embedded responses.
func tbParts(t testing.TB, r tbResp) []string {
	t.Helper()
	_, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("batch response content type %q: %v", r.header.Get("Content-Type"), err)
	}
	var out []string
	var walk func(body string, boundary string)
	walk = func(body string, boundary string) {
		mr := multipart.NewReader(strings.NewReader(body), boundary)
		for {
			p, err := mr.NextPart()
			if err != nil {
				return
			}
			data := new(strings.Builder)
			buf := make([]byte, 4096)
			for {
				n, err := p.Read(buf)
				data.Write(buf[:n])
				if err != nil {
					break
				}
			}
			mt, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			if mt == "multipart/mixed" {
				walk(data.String(), pp["boundary"])
				continue
			}
			out = append(out, data.String())
		}
	}
	walk(string(r.body), params["boundary"])
	return out
}

func TestTableBatchRaw(t *testing.T) {
	e := tbStart(t)
	e.table("rawbatch")
	base := e.app.TableURL
	ct, body := tbBatchBody(t, base, []string{
		"POST BASE/rawbatch HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\nContent-ID: 1\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"a\",\"V\":1}",
		"POST BASE/rawbatch HTTP/1.1\r\nContent-Type: application/json\r\nPrefer: return-no-content\r\nContent-ID: 2\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"b\"}",
		"POST BASE/rawbatch(PartitionKey='p',RowKey='c') HTTP/1.1\r\nX-HTTP-Method: MERGE\r\nContent-Type: application/json\r\nContent-ID: 3\r\n\r\n{\"M\":true}",
	}, true)
	r := e.raw(http.MethodPost, "$batch", map[string]string{"Content-Type": ct}, body)
	if r.status != http.StatusAccepted {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	parts := tbParts(t, r)
	if len(parts) != 3 {
		t.Fatalf("%d parts: %s", len(parts), r.body)
	}
	for i, want := range []string{"HTTP/1.1 201 Created\r\nContent-ID: 1\r\n", "HTTP/1.1 204 No Content\r\nContent-ID: 2\r\n", "HTTP/1.1 204 No Content\r\nContent-ID: 3\r\n"} {
		if !strings.HasPrefix(parts[i], want) {
			t.Fatalf("part %d: %q", i, parts[i])
		}
	}
	if !strings.Contains(parts[0], `"RowKey":"a","Timestamp"`) || !strings.Contains(parts[1], "Preference-Applied: return-no-content") || !strings.Contains(parts[2], "ETag: W/") {
		t.Fatalf("parts %q", parts)
	}

	// A lone GET is a query batch.
	ct, body = tbBatchBody(t, base, []string{"GET BASE/rawbatch(PartitionKey='p',RowKey='c') HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\n\r\n"}, false)
	r = e.raw(http.MethodPost, "$batch", map[string]string{"Content-Type": ct}, body)
	parts = tbParts(t, r)
	if r.status != http.StatusAccepted || len(parts) != 1 || !strings.HasPrefix(parts[0], "HTTP/1.1 200 OK\r\n") || !strings.Contains(parts[0], `"M":true`) {
		t.Fatalf("query batch: %d %q", r.status, parts)
	}
	ct, body = tbBatchBody(t, base, []string{"GET BASE/rawbatch(PartitionKey='p',RowKey='zz') HTTP/1.1\r\n\r\n"}, false)
	r = e.raw(http.MethodPost, "$batch", map[string]string{"Content-Type": ct}, body)
	if parts = tbParts(t, r); len(parts) != 1 || !strings.HasPrefix(parts[0], "HTTP/1.1 404 Not Found\r\n") {
		t.Fatalf("query batch for a missing entity: %q", parts)
	}
	// A GET inside a changeset is refused at its index.
	ct, body = tbBatchBody(t, base, []string{
		"DELETE BASE/rawbatch(PartitionKey='p',RowKey='a') HTTP/1.1\r\nIf-Match: *\r\n\r\n",
		"GET BASE/rawbatch(PartitionKey='p',RowKey='b') HTTP/1.1\r\n\r\n",
	}, true)
	r = e.raw(http.MethodPost, "$batch", map[string]string{"Content-Type": ct}, body)
	if parts = tbParts(t, r); len(parts) != 1 || !strings.HasPrefix(parts[0], "HTTP/1.1 400 Bad Request\r\n") || !strings.Contains(parts[0], `"value":"1:`) {
		t.Fatalf("GET in changeset: %q", parts)
	}
	if _, etag := e.tbGet(e.svc.NewClient("rawbatch"), "p", "a"); etag == "" {
		t.Fatal("failed batch deleted an entity")
	}
	// Malformed batches are rejected as a whole.
	for _, tc := range []struct{ ct, body string }{
		{"application/json", "{}"},
		{"multipart/mixed; boundary=batch_b1", "garbage"},
		{"multipart/mixed; boundary=batch_b1", "--batch_b1\r\nContent-Type: text/plain\r\n\r\nhello\r\n--batch_b1--\r\n"},
	} {
		r = e.raw(http.MethodPost, "$batch", map[string]string{"Content-Type": tc.ct}, []byte(tc.body))
		if r.status != http.StatusBadRequest || r.errCode(t) != "InvalidInput" {
			t.Fatalf("malformed batch %q: %d %s", tc.body, r.status, r.body)
		}
	}
	r = e.raw(http.MethodPost, "$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_b1"}, []byte(strings.Repeat("x", 4<<20+1)))
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized batch: %d", r.status)
	}
}
