package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// TestWriteDFSError: the dfs error body carries the code, the message
// with the request id and time, and the details in "detail", in their
// order (azure-sdk-for-net's recorded
// FileClientTests.AppendDataAsync_EmptyStream); no "detail" without
// details, and no body for HEAD.
func TestWriteDFSError(t *testing.T) {
	render := func(method string, e *azerr.Error) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		w.Header().Set("x-ms-request-id", "rid")
		WriteDFSError(w, httptest.NewRequest(method, "/a/fs/p", nil), e)
		return w
	}
	w := render(http.MethodPatch, azerr.InvalidHeader("Content-Length", "0"))
	if w.Code != 400 || w.Header().Get("x-ms-error-code") != "InvalidHeaderValue" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	body := w.Body.String()
	if !strings.Contains(body, `,"detail":{"HeaderName":"Content-Length","HeaderValue":"0"}}}`) {
		t.Fatalf("body %s", body)
	}
	var v struct {
		Error struct {
			Code, Message string
			Detail        map[string]string
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || v.Error.Code != "InvalidHeaderValue" ||
		!strings.HasPrefix(v.Error.Message, "The value for one of the HTTP headers is not in the correct format.\nRequestId:rid\nTime:") {
		t.Fatalf("body %s: %+v %v", body, v, err)
	}
	w = render(http.MethodGet, azerr.New(azerr.ContainerNotFound))
	if strings.Contains(w.Body.String(), "detail") {
		t.Fatalf("detail without details: %s", w.Body.String())
	}
	w = render(http.MethodHead, azerr.InvalidHeader("x", "y"))
	if w.Body.Len() != 0 || w.Code != 400 {
		t.Fatalf("HEAD: %d %q", w.Code, w.Body.String())
	}
}
