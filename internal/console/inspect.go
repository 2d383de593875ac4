package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/clock"
)

// inspect serves the console's own endpoints under /x/{account}/:
//
//	GET /x/{account}/activity?n=100            the last requests
//	GET /x/{account}/queues/{queue}/messages   QueueMessages
//	GET /x/{account}/shares/{share}/handles    FileHandles
//	GET /x/{account}/containers/{c}/lease?blob=name  BlobLease
//	GET /x/{account}/containers/{c}/lease       ContainerLease
//	GET /x/{account}/changes?n=100               Changes
//	GET /x/{account}/rates                       Counts (every account's)
//
// each signed with Shared Key as a Blob request to /{account}/... is.
type inspect struct{ cfg Config }

func (x *inspect) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, "UnsupportedHttpVerb", "use GET")
		return
	}
	// Verified as the request the page signed: the path without /x.
	signed := r.Clone(r.Context())
	signed.URL.Path = strings.TrimPrefix(r.URL.Path, "/x")
	signed.URL.RawPath = ""
	if r.URL.RawPath != "" {
		signed.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, "/x")
	}
	signed.RequestURI = signed.URL.RequestURI()
	account, ok, err := auth.Authenticate(signed, auth.Blob, x.cfg.Accounts, clock.Wall(x.cfg.Clock).Now())
	if err == nil && !ok {
		err = azerr.New(azerr.AuthenticationFailed)
	}
	if err != nil {
		var ae *azerr.Error
		status, code := http.StatusForbidden, azerr.AuthenticationFailed
		if errors.As(err, &ae) {
			status, code = ae.Status, ae.Code
		}
		writeError(w, status, code, err.Error())
		return
	}
	parts := strings.Split(strings.Trim(signed.URL.Path, "/"), "/")
	// parts[0] is the account Authenticate matched.
	switch {
	case len(parts) == 2 && parts[1] == "activity":
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n <= 0 || n > 1000 {
			n = 100
		}
		var list []activityEntry
		if x.cfg.Activity != nil {
			for _, e := range x.cfg.Activity.Last(account, n) {
				list = append(list, entryOf(e))
			}
		}
		if list == nil {
			list = []activityEntry{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"requests": list})
	case len(parts) == 4 && parts[1] == "queues" && parts[3] == "messages" && x.cfg.Inspector != nil:
		ms, err := x.cfg.Inspector.QueueMessages(r.Context(), account, parts[2], 1000)
		if err != nil {
			x.fail(w, err)
			return
		}
		if ms == nil {
			ms = []QueueMessage{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"messages": ms})
	case len(parts) == 4 && parts[1] == "shares" && parts[3] == "handles" && x.cfg.Inspector != nil:
		hs, err := x.cfg.Inspector.FileHandles(r.Context(), account, parts[2])
		if err != nil {
			x.fail(w, err)
			return
		}
		if hs == nil {
			hs = []FileHandle{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"handles": hs})
	case len(parts) == 4 && parts[1] == "containers" && parts[3] == "lease" && x.cfg.Inspector != nil:
		var l BlobLease
		var ok bool
		var err error
		if name := r.URL.Query().Get("blob"); name != "" {
			l, ok, err = x.cfg.Inspector.BlobLease(r.Context(), account, parts[2], name)
		} else {
			l, ok, err = x.cfg.Inspector.ContainerLease(r.Context(), account, parts[2])
		}
		if err != nil {
			x.fail(w, err)
			return
		}
		if !ok {
			writeError(w, http.StatusNotFound, "ResourceNotFound", "no such container or blob")
			return
		}
		writeJSON(w, http.StatusOK, l)
	case len(parts) == 2 && parts[1] == "rates" && x.cfg.Counts != nil:
		// Counters of every account: the server's metrics are not kept
		// per account.
		writeJSON(w, http.StatusOK, map[string]any{"time": time.Now().UTC(), "counts": x.cfg.Counts()})
	case len(parts) == 2 && parts[1] == "changes" && x.cfg.Inspector != nil:
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n <= 0 || n > 1000 {
			n = 100
		}
		cs, on, err := x.cfg.Inspector.Changes(r.Context(), account, n)
		if err != nil {
			x.fail(w, err)
			return
		}
		if cs == nil {
			cs = []Change{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"on": on, "changes": cs})
	default:
		writeError(w, http.StatusNotFound, "ResourceNotFound", "no such console endpoint")
	}
}

// fail renders a domain error: its Azure status and code, or 500.
func (x *inspect) fail(w http.ResponseWriter, err error) {
	var ae *azerr.Error
	if errors.As(err, &ae) {
		writeError(w, ae.Status, ae.Code, ae.Error())
		return
	}
	x.cfg.Logger.Error("console inspection", "err", err)
	writeError(w, http.StatusInternalServerError, "InternalError", "the server failed to read the store")
}
