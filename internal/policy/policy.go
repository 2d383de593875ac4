// Package policy holds the stored access policies (signed identifiers)
// that containers, queues, tables and shares keep in their ACLs. It is a
// neutral package: the domain packages keep and return these values, the
// front end (internal/server.Policies) resolves a SAS's signed
// identifier against them, and neither side's imports reach the other.
package policy

// Stored is one signed identifier of an ACL (a stored access policy), as
// every service keeps it in its container, queue, table or share record
// and writes it in Get ACL responses (Set Container ACL,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-container-acl,
// "Request body"). Start and Expiry are kept as the client sent them;
// the front end parses them when a SAS names the identifier.
type Stored struct {
	ID         string `xml:"Id" json:"id"`
	Start      string `xml:"AccessPolicy>Start,omitempty" json:"st,omitempty"`
	Expiry     string `xml:"AccessPolicy>Expiry,omitempty" json:"se,omitempty"`
	Permission string `xml:"AccessPolicy>Permission,omitempty" json:"sp,omitempty"`
}
