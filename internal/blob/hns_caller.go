package blob

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/dfs/acl"
)

// caller is who a request acts as on a hierarchical account's paths:
// nil (a superuser) for Shared Key and SAS, as on Azure ("Access control
// model in Azure Data Lake Storage Gen2": Shared Key and SAS callers are
// not subject to ACLs); a bearer token's object id and the group ids of
// its groups claim, whose access the paths' ACLs decide. Flat accounts
// never consult it.
func (r *req) caller() *acl.Principal {
	if r.Principal == nil {
		return nil
	}
	return &acl.Principal{User: r.Principal.OID, Groups: bearerGroups(r.Header.Get("Authorization"))}
}

// bearerGroups reads the groups claim of a bearer token the middleware
// verified (the group object ids Entra ID lists in an access token).
func bearerGroups(authz string) []string {
	tok, ok := strings.CutPrefix(authz, "Bearer ")
	if !ok {
		return nil
	}
	parts := strings.Split(strings.TrimSpace(tok), ".")
	if len(parts) != 3 {
		return nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil
	}
	var c struct {
		Groups []string `json:"groups"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return nil
	}
	return c.Groups
}
