package datalake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// setETag sets ETag and Last-Modified.
func setETag(h http.Header, etag string, modified time.Time) {
	h.Set("ETag", etag)
	h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
}

// writeJSON sends v as the dfs endpoint's JSON body, in one Write.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	out, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json;charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(status)
	_, err = w.Write(out)
	return err
}
