package server

import (
	"encoding/json"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// WriteJSONError renders e as the Table service's OData JSON error.
func WriteJSONError(w http.ResponseWriter, r *http.Request, e *azerr.Error) {
	h := w.Header()
	for k, v := range e.Headers {
		h.Set(k, v)
	}
	h.Set("X-Ms-Error-Code", e.Code)
	if r.Method == http.MethodHead || e.Status == http.StatusNotModified {
		w.WriteHeader(e.Status)
		return
	}
	type msg struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	}
	type inner struct {
		Code    string `json:"code"`
		Message msg    `json:"message"`
	}
	body := map[string]inner{"odata.error": {Code: e.Code, Message: msg{Lang: "en-US", Value: e.Message + "\nRequestId:" + h.Get("X-Ms-Request-Id") + "\nTime:" + nowISO(h)}}}
	out, _ := json.Marshal(body)
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write(out)
}

// WriteDFSError renders e as the Data Lake Storage Gen2 endpoint sends an
// error: the code in x-ms-error-code and, but for HEAD and 304, the body
// {"error":{"code":…,"message":…}} (the DataLakeStorageError definition
// of the Data Lake Storage Gen2 REST API specification, and the bodies
// of the azdatalake SDK's recorded tests), with the error's details in
// "detail" in their order, as in azure-sdk-for-net's recorded
// FileClientTests.AppendDataAsync_EmptyStream:
// "detail":{"HeaderName":"Content-Length","HeaderValue":"0"}.
func WriteDFSError(w http.ResponseWriter, r *http.Request, e *azerr.Error) {
	h := w.Header()
	for k, v := range e.Headers {
		h.Set(k, v)
	}
	h.Set("X-Ms-Error-Code", e.Code)
	if r.Method == http.MethodHead || e.Status == http.StatusNotModified {
		w.WriteHeader(e.Status)
		return
	}
	type inner struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail,omitempty"`
	}
	body := struct {
		Error inner `json:"error"`
	}{inner{Code: e.Code, Message: e.Message + "\nRequestId:" + h.Get("X-Ms-Request-Id") + "\nTime:" + nowISO(h), Detail: dfsDetail(e.Details)}}
	out, _ := json.Marshal(body)
	h.Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write(out)
}

// dfsDetail is the "detail" object of a dfs error body: the details as
// string members in their order, nil when there are none.
func dfsDetail(ds []azerr.Detail) json.RawMessage {
	if len(ds) == 0 {
		return nil
	}
	b := []byte{'{'}
	for i, d := range ds {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(d.Name)
		v, _ := json.Marshal(d.Value)
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}')
}
