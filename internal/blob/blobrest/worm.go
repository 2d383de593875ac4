package blobrest

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// WORMPrefix is where WORMHandler is mounted under server.ReservedPrefix.
const WORMPrefix = "/worm"

// WORMHandler is the admin endpoint of container-level WORM policies and
// legal holds (blob/containerworm.go), which on Azure are management-plane
// operations of the BlobContainers resource
// (https://learn.microsoft.com/rest/api/storagerp/blob-containers). It
// serves, under /.cerulean/worm (the prefix stripped before it):
//
//	GET    /worm/{account}/{container}                                   the policy and the legal hold
//	GET    /worm/{account}/{container}/immutabilityPolicies/default      GetImmutabilityPolicy
//	PUT    /worm/{account}/{container}/immutabilityPolicies/default      CreateOrUpdateImmutabilityPolicy
//	DELETE /worm/{account}/{container}/immutabilityPolicies/default      DeleteImmutabilityPolicy
//	POST   /worm/{account}/{container}/immutabilityPolicies/default/lock LockImmutabilityPolicy
//	POST   /worm/{account}/{container}/immutabilityPolicies/default/extend ExtendImmutabilityPolicy
//	POST   /worm/{account}/{container}/setLegalHold                      SetLegalHold
//	POST   /worm/{account}/{container}/clearLegalHold                    ClearLegalHold
//	DELETE /worm/{account}/{container}                                   BlobContainers Delete
//
// with ARM's JSON bodies ({"properties": {...}} of
// ImmutabilityPolicyProperties; LegalHold's {"tags": [...]}) and If-Match
// on the policy's ETag as ARM takes it. A request is signed with Shared
// Key as a Blob request to the path without /.cerulean/worm, that is
// /{account}/{container}/..., and verified with the account's keys (as
// the console's /x endpoints are, internal/console). Errors answer ARM's
// {"error": {"code", "message"}} with the status of the Azure error.
func WORMHandler(svc *blob.Service, accounts auth.Lookup, clk clock.Clock, log *slog.Logger) http.Handler {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.Default()
	}
	return &wormHandler{svc: svc, accounts: accounts, clk: clk, log: log}
}

type wormHandler struct {
	svc      *blob.Service
	accounts auth.Lookup
	clk      clock.Clock
	log      *slog.Logger
}

// wormPolicyProps is ARM's ImmutabilityPolicyProperties.
type wormPolicyProps struct {
	Days            *int              `json:"immutabilityPeriodSinceCreationInDays,omitempty"`
	State           string            `json:"state,omitempty"`
	AppendWrites    *bool             `json:"allowProtectedAppendWrites,omitempty"`
	AppendWritesAll *bool             `json:"allowProtectedAppendWritesAll,omitempty"`
	History         []blob.WORMUpdate `json:"updateHistory,omitempty"`
}

// wormPolicyJSON is ARM's ImmutabilityPolicy resource.
type wormPolicyJSON struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	ETag       string          `json:"etag,omitempty"`
	Properties wormPolicyProps `json:"properties"`
}

// legalHoldJSON is ARM's LegalHold.
type legalHoldJSON struct {
	HasLegalHold    bool     `json:"hasLegalHold"`
	Tags            []string `json:"tags"`
	AppendWritesAll bool     `json:"allowProtectedAppendWritesAll"`
}

func policyJSON(p *blob.WORMPolicy) wormPolicyJSON {
	out := wormPolicyJSON{Name: "default", Type: "Microsoft.Storage/storageAccounts/blobServices/containers/immutabilityPolicies"}
	if p == nil {
		return out
	}
	days, aw, awa := p.Days, p.AppendWrites, p.AppendWritesAll
	out.ETag = p.ETag
	out.Properties = wormPolicyProps{Days: &days, State: p.State, AppendWrites: &aw, AppendWritesAll: &awa, History: p.History}
	return out
}

func holdJSON(h *blob.WORMHold) legalHoldJSON {
	if h == nil {
		return legalHoldJSON{Tags: []string{}}
	}
	return legalHoldJSON{HasLegalHold: true, Tags: h.Tags, AppendWritesAll: h.AppendWritesAll}
}

func (h *wormHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	signed := r.Clone(r.Context())
	signed.URL.Path = strings.TrimPrefix(r.URL.Path, WORMPrefix)
	signed.URL.RawPath = ""
	if r.URL.RawPath != "" {
		signed.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, WORMPrefix)
	}
	signed.RequestURI = signed.URL.RequestURI()
	now := clock.Wall(h.clk).Now()
	account, ok, err := auth.Authenticate(signed, auth.Blob, h.accounts, now)
	if err == nil && !ok {
		err = azerr.Newf(azerr.AuthenticationFailed, "The admin endpoint takes Shared Key authorization.")
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	parts := strings.Split(strings.Trim(signed.URL.Path, "/"), "/")
	if len(parts) < 2 || parts[1] == "" {
		h.fail(w, azerr.Newf(azerr.InvalidURI, "The admin endpoint takes /.cerulean/worm/{account}/{container}/..."))
		return
	}
	ref := blob.ContainerRef{Account: account, Container: parts[1]}
	call := blob.Call{Now: h.clk.Now()}
	ifm := wire.Field(r.Header, "If-Match")
	ctx := r.Context()
	op := strings.Join(parts[2:], "/")
	var st blob.WORMState
	policyAnswer := true
	switch {
	case op == "" && r.Method == http.MethodGet:
		st, err = h.svc.GetContainerWORM(ctx, ref)
		if err == nil {
			var pol *wormPolicyJSON
			if st.Policy != nil {
				p := policyJSON(st.Policy)
				pol = &p
			}
			// immutableStorageWithVersioning as ARM's container
			// properties show it: with it enabled the policy is the
			// default version-level policy of the container's blobs.
			writeWORMJSON(w, http.StatusOK, "", map[string]any{"immutabilityPolicy": pol, "legalHold": holdJSON(st.Hold),
				"immutableStorageWithVersioning": map[string]bool{"enabled": h.svc.ImmutabilityOn(account)}})
			return
		}
	case op == "" && r.Method == http.MethodDelete:
		// The control plane's delete: the one way to delete an empty
		// container with a Locked policy (blob/containerworm.go).
		err = h.svc.DeleteContainer(ctx, blob.DeleteContainerInput{Call: call, Ref: ref, LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), ControlPlane: true})
		if err == nil {
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
			return
		}
	case op == "immutabilityPolicies/default" && r.Method == http.MethodGet:
		st, err = h.svc.GetContainerWORM(ctx, ref)
		if err == nil && st.Policy == nil {
			err = azerr.Newf(azerr.ResourceNotFound, "The container has no immutability policy.")
		}
	case op == "immutabilityPolicies/default" && r.Method == http.MethodPut:
		var in wormPolicyJSON
		if err = decodeWORM(r.Body, &in); err == nil {
			pi := blob.WORMPolicyInput{}
			if in.Properties.Days != nil {
				pi.Days = *in.Properties.Days
			}
			pi.AppendWrites = in.Properties.AppendWrites != nil && *in.Properties.AppendWrites
			pi.AppendWritesAll = in.Properties.AppendWritesAll != nil && *in.Properties.AppendWritesAll
			st, err = h.svc.PutContainerPolicy(ctx, call, ref, pi, ifm)
		}
	case op == "immutabilityPolicies/default" && r.Method == http.MethodDelete:
		var before blob.WORMState
		if before, err = h.svc.GetContainerWORM(ctx, ref); err == nil {
			if st, err = h.svc.DeleteContainerPolicy(ctx, ref, ifm); err == nil && before.Policy != nil {
				// ARM answers the aborted policy with
				// immutabilityPeriodSinceCreationInDays 0 (Az
				// PowerShell's BlobContainersDeleteImmutabilityPolicy
				// reference).
				p := *before.Policy
				p.Days = 0
				st.Policy = &p
			}
		}
	case op == "immutabilityPolicies/default/lock" && r.Method == http.MethodPost:
		st, err = h.svc.LockContainerPolicy(ctx, call, ref, ifm)
	case op == "immutabilityPolicies/default/extend" && r.Method == http.MethodPost:
		var in wormPolicyJSON
		if err = decodeWORM(r.Body, &in); err == nil {
			days := 0
			if in.Properties.Days != nil {
				days = *in.Properties.Days
			}
			if in.Properties.AppendWrites != nil || in.Properties.AppendWritesAll != nil {
				// "This property cannot be changed with
				// ExtendImmutabilityPolicy API" (ARM reference).
				err = azerr.Newf(azerr.InvalidInput, "ExtendImmutabilityPolicy does not change allowProtectedAppendWrites or allowProtectedAppendWritesAll.")
			} else {
				st, err = h.svc.ExtendContainerPolicy(ctx, call, ref, days, ifm)
			}
		}
	case (op == "setLegalHold" || op == "clearLegalHold") && r.Method == http.MethodPost:
		policyAnswer = false
		var in legalHoldJSON
		if err = decodeWORM(r.Body, &in); err == nil {
			if op == "setLegalHold" {
				st, err = h.svc.SetContainerLegalHold(ctx, ref, in.Tags, in.AppendWritesAll)
			} else {
				st, err = h.svc.ClearContainerLegalHold(ctx, ref, in.Tags)
			}
		}
	default:
		err = azerr.Newf(azerr.UnsupportedHTTPVerb, "No such admin operation: %s %s.", r.Method, r.URL.Path)
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	if !policyAnswer {
		writeWORMJSON(w, http.StatusOK, "", holdJSON(st.Hold))
		return
	}
	p := policyJSON(st.Policy)
	writeWORMJSON(w, http.StatusOK, p.ETag, p)
}

// decodeWORM reads a JSON body of at most 64 KiB.
func decodeWORM(body io.Reader, v any) error {
	dec := json.NewDecoder(io.LimitReader(body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return azerr.Newf(azerr.InvalidInput, "The request body is not valid JSON of the operation: %v", err)
	}
	return nil
}

func writeWORMJSON(w http.ResponseWriter, status int, etag string, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if etag != "" {
		w.Header().Set("Etag", etag)
	}
	w.Header().Set("Date", wire.FormatHTTPDate(time.Now()))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers an Azure error as ARM's error body with its status and
// x-ms-error-code, anything else as 500.
func (h *wormHandler) fail(w http.ResponseWriter, err error) {
	var ae *azerr.Error
	if !errors.As(err, &ae) {
		h.log.Error("worm admin endpoint", "err", err)
		ae = azerr.Newf(azerr.InternalError, "The server failed to read or write the store.")
	}
	w.Header().Set("X-Ms-Error-Code", ae.Code)
	writeWORMJSON(w, ae.Status, "", map[string]any{"error": map[string]string{"code": ae.Code, "message": ae.Message}})
}
