package blobrest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcpropsrest"
)

// The Blob service's dispatch before its route table, a switch over
// level, comp, restype, method and headers, kept to measure the table
// against (BenchmarkRouteLookup).

type switchOp func(r *req) (server.Response, error)

func (r *req) asSwitch(name string, o switchOp) (switchOp, error) {
	r.Op = name
	return o, nil
}

func (s *Service) routeSwitch(r *req) (switchOp, error) {
	comp := r.q.Get("comp")
	restype := r.q.Get("restype")
	m := r.Method
	bad := func() (switchOp, error) { return nil, server.NoRoute(comp) }
	// The shared service-level handlers (svcpropsrest), bound to s.
	bound := func(h func(*Service, *req) (server.Response, error)) switchOp {
		return func(r *req) (server.Response, error) { return h(s, r) }
	}
	// Get Account Information is valid on every level.
	if restype == "account" && comp == "properties" && (m == http.MethodGet || m == http.MethodHead) {
		return r.asSwitch("getAccountInfo", s.getAccountInfo)
	}
	switch {
	case r.container == "":
		switch {
		case comp == "list" && m == http.MethodGet:
			return r.asSwitch("listContainers", s.listContainers)
		case restype == "service" && comp == "properties" && m == http.MethodGet:
			return r.asSwitch("getServiceProperties", bound(svcpropsrest.GetProperties[*Service, *req]))
		case restype == "service" && comp == "properties" && m == http.MethodPut:
			return r.asSwitch("setServiceProperties", bound(svcpropsrest.SetProperties[*Service, *req]))
		case restype == "service" && comp == "stats" && m == http.MethodGet:
			return r.asSwitch("getServiceStats", bound(svcpropsrest.GetStats[*Service, *req]))
		case restype == "service" && comp == "userdelegationkey" && m == http.MethodPost:
			return r.asSwitch("getUserDelegationKey", s.getUserDelegationKey)
		case comp == "blobs" && m == http.MethodGet:
			return r.asSwitch("findBlobsByTagsAccount", s.findBlobsByTags)
		case comp == "batch" && m == http.MethodPost:
			return r.asSwitch("submitBatchAccount", s.submitBatch)
		case restype == "container":
			// a container operation without a container name
			return nil, azerr.InvalidQuery("restype", restype)
		}
		return bad()
	case r.name == "":
		if restype != "container" {
			if restype != "" {
				return nil, azerr.InvalidQuery("restype", restype)
			}
			return nil, azerr.New(azerr.InvalidURI)
		}
		switch {
		case comp == "" && m == http.MethodPut:
			return r.asSwitch("createContainer", s.createContainer)
		case comp == "" && (m == http.MethodGet || m == http.MethodHead):
			return r.asSwitch("getContainerProperties", s.getContainerProperties)
		case comp == "" && m == http.MethodDelete:
			return r.asSwitch("deleteContainer", s.deleteContainer)
		case comp == "metadata" && m == http.MethodPut:
			return r.asSwitch("setContainerMetadata", s.setContainerMetadata)
		case comp == "metadata" && (m == http.MethodGet || m == http.MethodHead):
			return r.asSwitch("getContainerProperties", s.getContainerProperties)
		case comp == "acl" && (m == http.MethodGet || m == http.MethodHead):
			return r.asSwitch("getContainerACL", s.getContainerACL)
		case comp == "acl" && m == http.MethodPut:
			return r.asSwitch("setContainerACL", s.setContainerACL)
		case comp == "lease" && m == http.MethodPut:
			return r.asSwitch("leaseContainer", s.leaseContainer)
		case comp == "list" && m == http.MethodGet:
			return r.asSwitch("listBlobs", s.listBlobs)
		case comp == "blobs" && m == http.MethodGet:
			return r.asSwitch("findBlobsByTags", s.findBlobsByTags)
		case comp == "batch" && m == http.MethodPost:
			return r.asSwitch("submitBatch", s.submitBatch)
		}
		return bad()
	}
	switch {
	case comp == "tier" && m == http.MethodPut:
		return r.asSwitch("setBlobTier", s.setBlobTier) // also on a snapshot
	case comp == "tags" && (m == http.MethodGet || m == http.MethodHead):
		return r.asSwitch("getBlobTags", s.getBlobTags) // also of a snapshot
	case comp == "tags" && m == http.MethodPut && r.snapshot == "":
		return r.asSwitch("setBlobTags", s.setBlobTags)
	}
	if r.snapshot != "" && (m == http.MethodPut || m == http.MethodPost) {
		return nil, azerr.Newf(azerr.InvalidQueryParameterValue, "Cannot perform this operation on a blob snapshot.").With("QueryParameterName", "snapshot").With("QueryParameterValue", r.snapshot)
	}
	switch {
	case comp == "" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			if r.Header.Get("x-ms-blob-type") != "" {
				return r.asSwitch("putBlobFromURL", s.putBlobFromURL)
			}
			return r.asSwitch("copyBlob", s.copyBlob)
		}
		return r.asSwitch("putBlob", s.putBlob)
	case comp == "" && (m == http.MethodGet || m == http.MethodHead):
		if m == http.MethodHead {
			return r.asSwitch("getBlobProperties", s.getBlobProperties)
		}
		return r.asSwitch("getBlob", s.getBlob)
	case comp == "" && m == http.MethodDelete:
		return r.asSwitch("deleteBlob", s.deleteBlob)
	case comp == "properties" && m == http.MethodPut:
		return r.asSwitch("setBlobProperties", s.setBlobProperties)
	case comp == "metadata" && m == http.MethodPut:
		return r.asSwitch("setBlobMetadata", s.setBlobMetadata)
	case comp == "metadata" && (m == http.MethodGet || m == http.MethodHead):
		return r.asSwitch("getBlobProperties", s.getBlobProperties)
	case comp == "lease" && m == http.MethodPut:
		return r.asSwitch("leaseBlob", s.leaseBlob)
	case comp == "snapshot" && m == http.MethodPut:
		return r.asSwitch("snapshotBlob", s.snapshotBlob)
	case comp == "undelete" && m == http.MethodPut:
		return r.asSwitch("undeleteBlob", s.undeleteBlob)
	case comp == "copy" && m == http.MethodPut:
		return r.asSwitch("abortCopyBlob", s.abortCopyBlob)
	case comp == "block" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			return r.asSwitch("putBlockFromURL", s.putBlockFromURL)
		}
		return r.asSwitch("putBlock", s.putBlock)
	case comp == "blocklist" && m == http.MethodPut:
		return r.asSwitch("putBlockList", s.putBlockList)
	case comp == "blocklist" && m == http.MethodGet:
		return r.asSwitch("getBlockList", s.getBlockList)
	case comp == "page" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			return r.asSwitch("putPageFromURL", s.putPageFromURL)
		}
		return r.asSwitch("putPage", s.putPage)
	case comp == "pagelist" && m == http.MethodGet:
		return r.asSwitch("getPageRanges", s.getPageRanges)
	case comp == "appendblock" && m == http.MethodPut:
		if r.Header.Get("x-ms-copy-source") != "" {
			return r.asSwitch("appendBlockFromURL", s.appendBlockFromURL)
		}
		return r.asSwitch("appendBlock", s.appendBlock)
	case comp == "seal" && m == http.MethodPut:
		return r.asSwitch("sealBlob", s.sealBlob)
	}
	return bad()
}

// BenchmarkRouteLookup routes Put Blob, Get Blob and Put Block (the hot
// paths) and a Get Container Properties through the route table and
// through the switch it replaced.
func BenchmarkRouteLookup(b *testing.B) {
	s := &Service{}
	for _, c := range []struct {
		name, method, target string
		h                    map[string]string
	}{
		{"putBlob", http.MethodPut, "/c/b", map[string]string{"x-ms-blob-type": "BlockBlob"}},
		{"getBlob", http.MethodGet, "/c/b", nil},
		{"putBlock", http.MethodPut, "/c/b?comp=block&blockid=AAAA", nil},
		{"getContainerProperties", http.MethodGet, "/c?restype=container", nil},
	} {
		hr := httptest.NewRequest(c.method, "http://127.0.0.1:10000/devstoreaccount1"+c.target, nil)
		for k, v := range c.h {
			hr.Header.Set(k, v)
		}
		r := parseReq(&server.Request{Request: hr})
		b.Run(c.name+"/table", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if rt, err := s.route(r); err != nil || rt.Name != c.name {
					b.Fatal(rt, err)
				}
			}
		})
		b.Run(c.name+"/switch", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := s.routeSwitch(r); err != nil || r.Op != c.name {
					b.Fatal(r.Op, err)
				}
			}
		})
	}
}

// TestRouteSwitchAgrees: the switch above still is the old dispatch,
// so the benchmark compares like with like.
func TestRouteSwitchAgrees(t *testing.T) {
	for _, target := range []string{"/c/b", "/c/b?comp=block", "/c?restype=container", "/?comp=list", "/c/b?comp=lease"} {
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete} {
			hr := httptest.NewRequest(m, "http://127.0.0.1:10000/devstoreaccount1"+target, nil)
			r1, r2 := parseReq(&server.Request{Request: hr}), parseReq(&server.Request{Request: hr})
			_, err1 := (*Service)(nil).route(r1)
			_, err2 := (*Service)(nil).routeSwitch(r2)
			c1, c2 := "", ""
			if e, ok := azerr.As(err1); ok {
				c1 = e.Code
			}
			if e, ok := azerr.As(err2); ok {
				c2 = e.Code
			}
			if r1.Op != r2.Op || c1 != c2 {
				t.Errorf("%s %s: table %q %q, switch %q %q", m, target, r1.Op, c1, r2.Op, c2)
			}
		}
	}
}
