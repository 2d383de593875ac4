// Package clockhttp is the HTTP face of clock control (internal/clockctl):
// the admin endpoint the service ports mount under server.ReservedPrefix.
package clockhttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clockctl"
)

// Handler serves the admin endpoint of clock control, relative to where
// it is mounted (the HTTP listeners mount it under server.ReservedPrefix):
//
//	GET  /clock                 200, the State
//	POST /clock/advance?by=61s  advance by a Go duration (or a JSON body
//	                            {"by":"61s"}); 200, the State after it;
//	                            400 for a duration that is not positive,
//	                            malformed or too large
//
// Answers are JSON; errors are {"error": "..."}. With c nil (the server
// runs without --clock-control) every path answers 404 and nothing can
// change the clock.
func Handler(c *clockctl.Control) http.Handler { return handler{c} }

type handler struct{ c *clockctl.Control }

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if h.c == nil {
		writeError(w, http.StatusNotFound, "clock control is off: start the server with --clock-control to use this endpoint")
		return
	}
	switch r.URL.Path {
	case "/clock":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "use GET")
			return
		}
		if err := h.c.Sync(r.Context()); err != nil {
			writeError(w, storeStatus(err), err.Error())
			return
		}
		writeJSON(w, http.StatusOK, h.c.State())
	case "/clock/advance":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		by, err := advanceBy(r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if _, err := h.c.Advance(r.Context(), by, r.RemoteAddr); err != nil {
			status := storeStatus(err)
			if errors.Is(err, clockctl.ErrNotForward) || errors.Is(err, clockctl.ErrTooFar) {
				status = http.StatusBadRequest
			}
			writeError(w, status, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, h.c.State())
	default:
		writeError(w, http.StatusNotFound, "no such endpoint: want GET /clock or POST /clock/advance?by=<duration>")
	}
}

// advanceBy reads the duration of an advance: the query's by, else the
// JSON body's.
func advanceBy(r *http.Request) (time.Duration, error) {
	q := r.URL.Query()
	s, inQuery := q.Get("by"), q.Has("by")
	if !inQuery {
		raw, err := io.ReadAll(io.LimitReader(r.Body, 4097))
		if err != nil {
			return 0, fmt.Errorf("reading the body: %v", err)
		}
		if len(raw) > 4096 {
			return 0, errors.New("the body is larger than 4 KiB")
		}
		if strings.TrimSpace(string(raw)) == "" {
			return 0, errors.New(`say by how much: ?by=61s or a JSON body {"by":"61s"}`)
		}
		var body struct {
			By *string `json:"by"`
		}
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil || body.By == nil {
			return 0, errors.New(`the body must be a JSON object {"by":"<duration>"}`)
		}
		s = *body.By
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("by=%q is not a duration (want e.g. 61s, 90m, 168h)", s)
	}
	if d <= 0 {
		return 0, clockctl.ErrNotForward
	}
	return d, nil
}

// storeStatus is 503 for a store that does not answer, else 500.
func storeStatus(err error) int {
	if clockctl.StoreDown(err) {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
