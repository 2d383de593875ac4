package tablerest

import (
	"fmt"
	"net/http"
	"testing"
)

// BenchmarkInsertGetEntity measures the service's own cost of the Table
// benchmark's hot operations, Insert Entity then Get Entity, on the
// embedded backend without fsync, HTTP or authentication: the handlers,
// the OData JSON and the transactions.
func BenchmarkInsertGetEntity(b *testing.B) {
	s := newTestService(b)
	if w := direct(b, s, http.MethodPost, "Tables", nil, []byte(`{"TableName":"bench"}`)); w.Code != http.StatusCreated {
		b.Fatalf("create table: %d %s", w.Code, w.Body)
	}
	hdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=minimalmetadata", "Prefer": "return-no-content"}
	get := map[string]string{"Accept": "application/json;odata=minimalmetadata"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rk := fmt.Sprintf("%08d", i)
		body := []byte(`{"PartitionKey":"p","RowKey":"` + rk + `","Name":"entity","N":42,"Score":0.5,"Active":true}`)
		if w := direct(b, s, http.MethodPost, "bench", hdr, body); w.Code != http.StatusNoContent {
			b.Fatalf("insert: %d %s", w.Code, w.Body)
		}
		if w := direct(b, s, http.MethodGet, "bench(PartitionKey='p',RowKey='"+rk+"')", get, nil); w.Code != http.StatusOK {
			b.Fatalf("get: %d %s", w.Code, w.Body)
		}
	}
}
