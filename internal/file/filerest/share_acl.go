package filerest

import (
	"encoding/xml"
	"io"
	"net/http"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Stored access policy limits (Define a stored access policy,
// https://learn.microsoft.com/en-us/rest/api/storageservices/define-stored-access-policy):
// five per share, ids of at most 64 characters, share SAS permissions r c w d
// l.
const (
	maxSignedIDs   = 5
	maxSignedIDLen = 64
	sharePolicyOps = "rcwdl"
	maxACLBody     = 64 << 10
)

type shareACLXML struct {
	XMLName xml.Name        `xml:"SignedIdentifiers"`
	Items   []policy.Stored `xml:"SignedIdentifier"`
}

// parseShareACL reads a Set Share ACL body: malformed XML, more than five
// policies or an id over 64 characters is 400 InvalidXmlDocument (azfile
// TestShareSetAccessPolicyMoreThanFive, TestShareSetPermissionsNegative); a
// bad time or permission letter 400 InvalidXmlNodeValue. Start after Expiry
// is accepted (azfile TestShareSetPermissionsNegativeInvalidPolicyTimes
// succeeds).
func parseShareACL(body io.Reader) ([]policy.Stored, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxACLBody+1))
	if err != nil {
		return nil, extent.BodyErr(err)
	}
	if len(raw) > maxACLBody {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	var acl shareACLXML
	if len(raw) > 0 {
		if err := xml.Unmarshal(raw, &acl); err != nil {
			return nil, azerr.New(azerr.InvalidXMLDocument)
		}
	}
	if len(acl.Items) > maxSignedIDs {
		return nil, azerr.Newf(azerr.InvalidXMLDocument, "At most five stored access policies may be set.")
	}
	for _, it := range acl.Items {
		if it.ID == "" || len(it.ID) > maxSignedIDLen {
			return nil, azerr.Newf(azerr.InvalidXMLDocument, "Signed identifier ids must be 1 to 64 characters.")
		}
		for _, t := range []string{it.Start, it.Expiry} {
			if t != "" {
				if _, err := wire.ParseISOTime(t); err != nil {
					return nil, azerr.Newf(azerr.InvalidXMLNodeValue, "Invalid access policy time %q.", t)
				}
			}
		}
		for _, ch := range it.Permission {
			if !strings.ContainsRune(sharePolicyOps, ch) {
				return nil, azerr.Newf(azerr.InvalidXMLNodeValue, "Invalid permission %q.", it.Permission)
			}
		}
	}
	return acl.Items, nil
}

// getShareACL is Get Share ACL: the share's stored access policies.
func (s *Service) getShareACL(r *req) (server.Response, error) {
	out, err := s.f.GetShareProperties(r.Context(), file.GetSharePropertiesInput{Ref: refOf(r)})
	if err != nil {
		return server.Response{}, err
	}
	resp, err := server.XML(http.StatusOK, shareACLXML{Items: out.Share.ACL})
	if err != nil {
		return server.Response{}, err
	}
	setShareETag(&resp, out.Share)
	return resp, nil
}

// setShareACL is Set Share ACL: it replaces the stored access policies
// (an empty body removes them all).
func (s *Service) setShareACL(r *req) (server.Response, error) {
	if r.ContentLength > maxACLBody {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	acl, err := parseShareACL(r.Body)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.SetShareACL(r.Context(), file.SetShareACLInput{Ref: refOf(r), ACL: acl})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Bodiless(http.StatusOK)
	setShareETag(&resp, out.Share)
	return resp, nil
}

// maxPermission bounds a Create Permission body; the SDDL itself may be up to
// 64 KiB (Create Permission,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-permission).
const maxPermission = 64 << 10

// permissionJSON is the body of Create Permission and Get Permission.
type permissionJSON struct {
	Permission string `json:"permission"`
	Format     string `json:"format,omitempty"`
}

// sddlFormat checks a permission format (x-ms-file-permission-format or
// the "format" member): absent or "sddl". Binary security descriptors
// are not supported: Cerulean stores SDDL only.
func sddlFormat(f string) bool { return f == "" || strings.EqualFold(f, "sddl") }

// createPermission is Create Permission: stores an SDDL in the share's
// permission table and returns its key (201 x-ms-file-permission-key). The
// same SDDL always gets the same key. A body that is not the JSON object, an
// empty or malformed SDDL, or the binary format is 400 FileInvalidPermission
// (Azure Files error codes,
// https://learn.microsoft.com/en-us/rest/api/storageservices/file-service-error-codes;
// for the binary format the code is inferred).
func (s *Service) createPermission(r *req) (server.Response, error) {
	const maxBody = maxPermission + 1024 // the SDDL, JSON-escaped, and the format
	if r.ContentLength > maxBody {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return server.Response{}, extent.BodyErr(err)
	}
	if len(raw) > maxBody {
		return server.Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	var p permissionJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return server.Response{}, azerr.Newf(azerr.FileInvalidPermission, "The body must be a JSON object with a permission member.")
	}
	if !sddlFormat(p.Format) {
		return server.Response{}, azerr.Newf(azerr.FileInvalidPermission, "Only the SDDL permission format is supported.")
	}
	if len(p.Permission) > maxPermission || !file.ValidSDDL(p.Permission) {
		return server.Response{}, azerr.New(azerr.FileInvalidPermission)
	}
	out, err := s.f.CreatePermission(r.Context(), file.CreatePermissionInput{Ref: refOf(r), SDDL: p.Permission})
	if err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusCreated).With("X-Ms-File-Permission-Key", out.Key), nil
}

// getPermission is Get Permission: the SDDL stored under
// x-ms-file-permission-key, as JSON {"permission": "..."}. A key the
// share does not have is 400 FileInvalidPermissionKey (Azure Files error
// codes).
func (s *Service) getPermission(r *req) (server.Response, error) {
	key := strings.TrimSpace(wire.Field(r.Header, "X-Ms-File-Permission-Key"))
	if key == "" {
		return server.Response{}, azerr.MissingHeader("x-ms-file-permission-key")
	}
	if f := wire.Field(r.Header, "X-Ms-File-Permission-Format"); !sddlFormat(f) {
		return server.Response{}, azerr.InvalidHeader("x-ms-file-permission-format", f)
	}
	got, err := s.f.GetPermission(r.Context(), file.GetPermissionInput{Ref: refOf(r), Key: key})
	if err != nil {
		return server.Response{}, err
	}
	out, err := json.Marshal(permissionJSON{Permission: got.SDDL})
	if err != nil {
		return server.Response{}, err
	}
	return server.Response{Status: http.StatusOK, Body: out, ContentType: "application/json; charset=utf-8"}, nil
}
