package blobrest

import (
	"github.com/cerulean-storage/cerulean/internal/hns/acl"
)

// caller is who a request acts as on a hierarchical account's paths:
// nil (a superuser) for Shared Key and SAS, as on Azure ("Access control
// model in Azure Data Lake Storage Gen2": Shared Key and SAS callers are
// not subject to ACLs); a bearer token's object id and the group ids of
// its groups claim (auth.BearerPrincipal, as the dfs endpoint reads
// them), whose access the paths' ACLs decide. Flat accounts never
// consult it.
func (r *req) caller() *acl.Principal {
	if r.Principal == nil {
		return nil
	}
	return &acl.Principal{User: r.Principal.OID, Groups: r.Principal.Groups}
}
