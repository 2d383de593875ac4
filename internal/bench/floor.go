package bench

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Floor is the cost floor for the CPU-per-operation figures of
// docs/benchmarks.md: a bare net/http server with no authentication, no
// storage and no Azure front end, answering each request of the blob,
// queue and tablepoint workloads with the least the Azure SDK for Go
// accepts (the status it checks, and for reads a body it can decode).
// What Cerulean's server spends per operation above what this server
// spends is what its front end, domain and store cost; the loopback
// transfer, net/http's parsing and the sockets are common to both.
//
// size is the body length Get Blob answers with (the workload checks it).
// One handler serves all three services: requests are told apart by their
// shape, as the paths of the three services do not overlap for the
// names the workloads use.
func Floor(size int) http.Handler {
	blob := make([]byte, size)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		now := time.Now().UTC()
		q := r.URL.Query()
		segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // account, then names
		switch {
		case strings.Contains(r.Header.Get("Accept"), "json") || strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || r.Header.Get("DataServiceVersion") != "":
			floorTable(w, r, now)
		case len(segs) >= 3 && segs[2] == "messages":
			floorQueue(w, r, now)
		case r.Method == http.MethodGet && q.Get("comp") == "metadata":
			h.Set("x-ms-approximate-messages-count", "0")
			w.WriteHeader(http.StatusOK)
		case r.Method == http.MethodPut:
			h.Set("Etag", `"0x1"`)
			h.Set("Last-Modified", now.Format(http.TimeFormat))
			w.WriteHeader(http.StatusCreated)
		case r.Method == http.MethodGet:
			h.Set("Etag", `"0x1"`)
			h.Set("Last-Modified", now.Format(http.TimeFormat))
			h.Set("Content-Length", strconv.Itoa(len(blob)))
			h.Set("x-ms-blob-type", "BlockBlob")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(blob)
		case r.Method == http.MethodDelete:
			if len(segs) == 2 && q.Get("restype") == "" { // a queue
				w.WriteHeader(http.StatusNoContent)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
}

// floorQueue answers Put Message, Get Messages and Delete Message with one
// fixed message (Queue service REST reference: Put Message, Get Messages).
func floorQueue(w http.ResponseWriter, r *http.Request, now time.Time) {
	t := now.Format(http.TimeFormat)
	later := now.Add(30 * time.Second).Format(http.TimeFormat)
	switch r.Method {
	case http.MethodPost:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><QueueMessagesList><QueueMessage><MessageId>m1</MessageId><InsertionTime>`+t+`</InsertionTime><ExpirationTime>`+later+`</ExpirationTime><PopReceipt>p1</PopReceipt><TimeNextVisible>`+t+`</TimeNextVisible></QueueMessage></QueueMessagesList>`)
	case http.MethodGet:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><QueueMessagesList><QueueMessage><MessageId>m1</MessageId><InsertionTime>`+t+`</InsertionTime><ExpirationTime>`+later+`</ExpirationTime><PopReceipt>p1</PopReceipt><TimeNextVisible>`+later+`</TimeNextVisible><DequeueCount>1</DequeueCount><MessageText>0123456789abcdef</MessageText></QueueMessage></QueueMessagesList>`)
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// floorTable answers Create Table, Insert Entity (as no content, which
// the SDK asks for), Get Entity with one fixed entity, and Delete Table
// (Table service REST reference).
func floorTable(w http.ResponseWriter, r *http.Request, now time.Time) {
	h := w.Header()
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	etag := `W/"datetime'` + now.Format("2006-01-02T15:04:05.0000000Z") + `'"`
	switch r.Method {
	case http.MethodPost:
		h.Set("Etag", etag)
		if strings.Contains(r.Header.Get("Prefer"), "return-no-content") {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"TableName":"t"}`)
	case http.MethodGet:
		h.Set("Etag", etag)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"odata.etag":"`+strings.ReplaceAll(etag, `"`, `\"`)+`","PartitionKey":"w0","RowKey":"0000000000","Timestamp":"`+now.Format(time.RFC3339Nano)+`","N":1,"Name":"entity-1"}`)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}
