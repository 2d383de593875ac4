package tablerest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/bolt"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/table"
)

// direct calls the service without HTTP, as an authenticated request.
func direct(t testing.TB, s *Service, method, rel string, hdr map[string]string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	hr := httptest.NewRequest(method, "http://127.0.0.1:10002/acct/"+rel, bytes.NewReader(body))
	for k, v := range hdr {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	r := &server.Request{Request: hr, Account: "acct", Authenticated: true, Now: time.Now().UTC(), ID: "id"}
	if err := s.ServeAzure(w, r); err != nil {
		w = httptest.NewRecorder()
		server.WriteJSONError(w, hr, server.ToAzure(context.Background(), s.log, err))
	}
	return w
}

func newTestService(t testing.TB) *Service {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "meta.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return New(table.New(db, clock.Real{}, nil), nil)
}

// loadPartition creates table "bench" holding n entities in partition
// "big" (RowKey %08d, N = i) with batches of 100.
func loadPartition(t testing.TB, s *Service, n int) {
	t.Helper()
	if w := direct(t, s, http.MethodPost, "Tables", nil, []byte(`{"TableName":"bench"}`)); w.Code != http.StatusCreated {
		t.Fatalf("create table: %d %s", w.Code, w.Body)
	}
	for i := 0; i < n; i += 100 {
		var b strings.Builder
		b.WriteString("--batch_x\r\nContent-Type: multipart/mixed; boundary=changeset_y\r\n\r\n")
		for j := i; j < min(i+100, n); j++ {
			ent, _ := json.Marshal(map[string]any{"PartitionKey": "big", "RowKey": fmt.Sprintf("%08d", j), "N": j, "Name": fmt.Sprint("entity-", j), "Score": float64(j) + 0.5, "Active": j%2 == 0})
			fmt.Fprintf(&b, "--changeset_y\r\nContent-Type: application/http\r\n\r\nPOST http://127.0.0.1:10002/acct/bench HTTP/1.1\r\nPrefer: return-no-content\r\nContent-Type: application/json\r\n\r\n%s\r\n", ent)
		}
		b.WriteString("--changeset_y--\r\n--batch_x--\r\n")
		w := direct(t, s, http.MethodPost, "$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=batch_x"}, []byte(b.String()))
		if w.Code != http.StatusAccepted || strings.Contains(w.Body.String(), "odata.error") {
			t.Fatalf("batch: %d %s", w.Code, w.Body)
		}
	}
}

// queryAll runs a query through every continuation and returns the
// number of rows and requests.
func queryAll(t testing.TB, s *Service, filter string) (rows, pages int) {
	q := url.Values{"$filter": {filter}}
	for {
		w := direct(t, s, http.MethodGet, "bench()?"+q.Encode(), map[string]string{"Accept": "application/json;odata=nometadata"}, nil)
		if w.Code != http.StatusOK {
			t.Fatalf("query: %d %s", w.Code, w.Body)
		}
		var page struct{ Value []json.RawMessage }
		if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		rows += len(page.Value)
		pages++
		npk := w.Header().Get("x-ms-continuation-NextPartitionKey")
		if npk == "" {
			return rows, pages
		}
		q.Set("NextPartitionKey", npk)
		q.Set("NextRowKey", w.Header().Get("x-ms-continuation-NextRowKey"))
	}
}

func TestQueryPagesThroughLargePartition(t *testing.T) {
	s := newTestService(t)
	loadPartition(t, s, 3000)
	if rows, pages := queryAll(t, s, "PartitionKey eq 'big' and N ge 500 and N lt 1700"); rows != 1200 || pages != 2 {
		t.Fatalf("%d rows in %d pages", rows, pages)
	}
	if rows, pages := queryAll(t, s, "PartitionKey eq 'big' and RowKey gt '00002990'"); rows != 9 || pages != 1 {
		t.Fatalf("%d rows in %d pages", rows, pages)
	}
}

// BenchmarkQueryPropertyFilter is the filtered query of the Table
// benchmark without HTTP: 1,000 rows out of a 100,000-entity partition,
// selected by an ordinary property, so every entity is scanned.
func BenchmarkQueryPropertyFilter(b *testing.B) {
	s := newTestService(b)
	loadPartition(b, s, 100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rows, _ := queryAll(b, s, "PartitionKey eq 'big' and N ge 50000 and N lt 51000"); rows != 1000 {
			b.Fatalf("%d rows", rows)
		}
	}
}

// BenchmarkQueryRowKeyRange selects the same rows by RowKey range.
func BenchmarkQueryRowKeyRange(b *testing.B) {
	s := newTestService(b)
	loadPartition(b, s, 100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rows, _ := queryAll(b, s, "PartitionKey eq 'big' and RowKey ge '00050000' and RowKey lt '00051000'"); rows != 1000 {
			b.Fatalf("%d rows", rows)
		}
	}
}

// rerunStore runs every Update fn twice: once in a transaction that is
// rolled back, then for real, as a backend retrying a conflict would.
// Update fns must reset whatever they set outside the transaction.
type rerunStore struct {
	kv.Store
	runs atomic.Int64
}

var errRollback = errors.New("rollback")

func (s *rerunStore) Update(ctx context.Context, fn func(kv.Tx) error) error {
	s.runs.Add(1)
	if err := s.Store.Update(ctx, func(tx kv.Tx) error {
		_ = fn(tx)
		return errRollback
	}); !errors.Is(err, errRollback) {
		return err
	}
	return s.Store.Update(ctx, fn)
}

func TestUpdateFnsRerunSafely(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "meta.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rs := &rerunStore{Store: db}
	s := New(table.New(rs, clock.Real{}, nil), nil)
	loadPartition(t, s, 250)
	// A batch that fails at index 1 still reports index 1, and applies
	// nothing.
	body := "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n" +
		"--c\r\nContent-Type: application/http\r\n\r\nPOST http://127.0.0.1:10002/acct/bench HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"big\",\"RowKey\":\"new\"}\r\n" +
		"--c\r\nContent-Type: application/http\r\n\r\nPOST http://127.0.0.1:10002/acct/bench HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"big\",\"RowKey\":\"00000001\"}\r\n" +
		"--c--\r\n--b--\r\n"
	w := direct(t, s, http.MethodPost, "$batch", map[string]string{"Content-Type": "multipart/mixed; boundary=b"}, []byte(body))
	if !strings.Contains(w.Body.String(), `"value":"1:The specified entity already exists.`) || strings.Count(w.Body.String(), "HTTP/1.1") != 1 {
		t.Fatalf("failed batch: %s", w.Body)
	}
	if rows, _ := queryAll(t, s, "RowKey eq 'new'"); rows != 0 {
		t.Fatal("failed batch applied")
	}
	// Merge, then a conditional update with the returned ETag.
	w = direct(t, s, "MERGE", "bench(PartitionKey='big',RowKey='00000002')", map[string]string{"If-Match": "*", "Content-Type": "application/json"}, []byte(`{"X":1}`))
	if w.Code != http.StatusNoContent {
		t.Fatalf("merge: %d %s", w.Code, w.Body)
	}
	etag := w.Header().Get("ETag")
	w = direct(t, s, http.MethodPut, "bench(PartitionKey='big',RowKey='00000002')", map[string]string{"If-Match": etag, "Content-Type": "application/json"}, []byte(`{"Y":2}`))
	if w.Code != http.StatusNoContent || w.Header().Get("ETag") == etag {
		t.Fatalf("update: %d %s", w.Code, w.Body)
	}
	// Delete the table (purge in several transactions) and re-create it.
	if w = direct(t, s, http.MethodDelete, "Tables('bench')", nil, nil); w.Code != http.StatusNoContent {
		t.Fatalf("delete table: %d %s", w.Code, w.Body)
	}
	if w = direct(t, s, http.MethodPost, "Tables", nil, []byte(`{"TableName":"bench"}`)); w.Code != http.StatusCreated {
		t.Fatalf("re-create: %d %s", w.Code, w.Body)
	}
	if rows, _ := queryAll(t, s, "true"); rows != 0 {
		t.Fatalf("%d entities survived", rows)
	}
	if rs.runs.Load() < 10 {
		t.Fatalf("only %d updates ran", rs.runs.Load())
	}
}
