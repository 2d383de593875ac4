package blob

import (
	"net/http"
	"net/url"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/xcopy"
)

// as records the routed operation's name (the key of sasRules).
func (r *req) as(name string, o op) (op, error) {
	r.opName = name
	r.Op = name
	return o, nil
}

// sasRules is what each Blob operation needs from a SAS (Create a service
// SAS,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas;
// Create an account SAS). Operations not listed (container ACL, service
// properties and stats) are Shared Key only; Get Account Information takes
// any SAS (authorizeSAS).
var sasRules = map[string]server.SASRule{
	"listContainers":         {Resource: auth.ServiceLevel, AnyOf: "l"},
	"createContainer":        {Resource: auth.ContainerLevel, AnyOf: "c"},
	"getContainerProperties": {Resource: auth.ContainerLevel, AnyOf: "r"},
	"deleteContainer":        {Resource: auth.ContainerLevel, AnyOf: "d"},
	"setContainerMetadata":   {Resource: auth.ContainerLevel, AnyOf: "w"},
	"leaseContainer":         {Resource: auth.ContainerLevel, AnyOf: "w"},
	"listBlobs":              {Resource: auth.ContainerLevel, AnyOf: "l"},

	"getBlob":           {Resource: auth.ObjectLevel, AnyOf: "r"},
	"getBlobProperties": {Resource: auth.ObjectLevel, AnyOf: "r"},
	"getBlockList":      {Resource: auth.ObjectLevel, AnyOf: "r"},
	"getPageRanges":     {Resource: auth.ObjectLevel, AnyOf: "r"},
	"putBlob":           {Resource: auth.ObjectLevel, AnyOf: "cw"},
	"putBlock":          {Resource: auth.ObjectLevel, AnyOf: "cw"},
	"putBlockList":      {Resource: auth.ObjectLevel, AnyOf: "cw"},
	"appendBlock":       {Resource: auth.ObjectLevel, AnyOf: "aw"},
	"putPage":           {Resource: auth.ObjectLevel, AnyOf: "w"},
	"setBlobProperties": {Resource: auth.ObjectLevel, AnyOf: "w"},
	"setBlobMetadata":   {Resource: auth.ObjectLevel, AnyOf: "w"},
	"snapshotBlob":      {Resource: auth.ObjectLevel, AnyOf: "w"},
	"copyBlob":          {Resource: auth.ObjectLevel, AnyOf: "w"},
	"abortCopyBlob":     {Resource: auth.ObjectLevel, AnyOf: "w"},
	"leaseBlob":         {Resource: auth.ObjectLevel, AnyOf: "w"},
	"undeleteBlob":      {Resource: auth.ObjectLevel, AnyOf: "w"},
	"deleteBlob":        {Resource: auth.ObjectLevel, AnyOf: "d"},
	"setBlobTier":       {Resource: auth.ObjectLevel, AnyOf: "w"},
	"sealBlob":          {Resource: auth.ObjectLevel, AnyOf: "w"},

	"putBlobFromURL":     {Resource: auth.ObjectLevel, AnyOf: "cw"},
	"putBlockFromURL":    {Resource: auth.ObjectLevel, AnyOf: "cw"},
	"appendBlockFromURL": {Resource: auth.ObjectLevel, AnyOf: "aw"},
	"putPageFromURL":     {Resource: auth.ObjectLevel, AnyOf: "w"},
	"getBlobTags":        {Resource: auth.ObjectLevel, AnyOf: "t"},
	"setBlobTags":        {Resource: auth.ObjectLevel, AnyOf: "t"},

	"findBlobsByTags": {Resource: auth.ContainerLevel, AnyOf: "f"},
	// A batch needs no permission of its own: each sub-request is
	// authorized by its own signature.
	"submitBatch":            {Resource: auth.ContainerLevel},
	"submitBatchAccount":     {Resource: auth.ServiceLevel},
	"findBlobsByTagsAccount": {Resource: auth.ServiceLevel, AnyOf: "f"},
}

// authorizeSAS verifies the request's SAS for the routed operation; the
// stored access policies come from the container's ACL, read now.
func (s *Service) authorizeSAS(r *req) error {
	rule, ok := sasRules[r.opName]
	if r.opName == "getAccountInfo" {
		// Any SAS valid for the addressed account, container or blob (Get
		// Account Information,
		// https://learn.microsoft.com/en-us/rest/api/storageservices/get-account-information).
		rule, ok = server.SASRule{Resource: auth.ServiceLevel}, true
		switch {
		case r.name != "":
			rule.Resource = auth.ObjectLevel
		case r.container != "":
			rule.Resource = auth.ContainerLevel
		}
	}
	eff, err := r.AuthorizeSAS(server.SASTarget{Container: r.container, Path: r.name}, s.policies(r, r.container), rule, ok)
	if err != nil {
		return err
	}
	r.sas = eff
	return nil
}

// policies resolves signed identifiers in the ACL of container cont.
func (s *Service) policies(r *req, cont string) auth.PolicyLookup {
	return server.Policies(func() ([]server.StoredPolicy, error) {
		var acl []server.StoredPolicy
		err := s.store.View(r.Context(), func(tx kv.Tx) error {
			c, err := loadContainer(tx, r.Account, cont)
			if err == nil {
				acl = c.ACL
			}
			return err
		})
		return acl, err
	})
}

// authorizeCopySource authorizes the source of a copy whose destination
// a SAS authorized: the destination's token grants nothing on the
// source, so the source must carry its own SAS with read permission or
// be publicly readable (403 CannotVerifyCopySource otherwise).
func (s *Service) authorizeCopySource(r *req, cont, name string) error {
	u, err := url.Parse(r.Header.Get("x-ms-copy-source"))
	if err != nil {
		return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source URL is not valid.").WithStatus(http.StatusForbidden)
	}
	ok, err := s.sourceReadable(r.Request, cont, name, u.Query())
	if err != nil || ok {
		return err
	}
	return azerr.Newf(azerr.CannotVerifyCopySource, "The copy source is not public and carries no SAS.").WithStatus(http.StatusForbidden)
}

// sourceReadable reports whether the blob cont/name, named by a copy
// source URL whose query is q, may be read without the request's own
// credentials: q carries a SAS granting read (verified as a blob SAS; a
// SAS that fails is 403 CannotVerifyCopySource with its code), or the
// container is public.
func (s *Service) sourceReadable(sr *server.Request, cont, name string, q url.Values) (bool, error) {
	if q.Has("sig") {
		r := &req{Request: sr, q: q, container: cont, name: name}
		if _, err := sr.AuthorizeForeignSourceSAS(auth.Blob, q, server.SASTarget{Container: cont, Path: name}, s.policies(r, cont), sasRules["getBlob"]); err != nil {
			code := azerr.AuthenticationFailed
			if ae, ok := azerr.As(err); ok {
				code = ae.Code
			}
			return false, xcopy.Failure(http.StatusForbidden, code, "The copy source SAS does not authorize reading the source blob.")
		}
		return true, nil
	}
	var access string
	err := s.store.View(sr.Context(), func(tx kv.Tx) error {
		c, err := loadContainer(tx, sr.Account, cont)
		if err != nil {
			return err
		}
		access = c.PublicAccess
		return nil
	})
	if err != nil && !azerr.Has(err, azerr.ContainerNotFound) {
		return false, err
	}
	return access == "blob" || access == "container", nil
}
