package server

import (
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// UserDelegationKey is the answer to Get User Delegation Key
// (https://learn.microsoft.com/rest/api/storageservices/get-user-delegation-key)
// for the service whose sks letter is service ("b" on the Blob endpoint,
// "f" on the File endpoint, where azfile 1.5.4 and
// azure-storage-file-share 12.24.0b1 ask for one from 2026-02-06, "q" on
// the Queue endpoint, where azure-storage-queue 12.15.0b1 does):
// POST /?restype=service&comp=userdelegationkey, authorized with a
// Microsoft Entra ID bearer token only, with a KeyInfo body of Start
// (optional) and Expiry (at most seven days ahead), and DelegatedUserTid
// from 2025-07-05. The key is derived from the account key and the
// signed fields (auth.DelegationKeyValue), so SAS tokens signed with it
// verify on any front end without a stored key.
func UserDelegationKey(r *Request, service string) (Response, error) {
	if r.Principal == nil {
		return Response{}, auth.ErrBearerOnly()
	}
	if r.ContentLength > 64<<10 {
		return Response{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil {
		return Response{}, err
	}
	var in struct {
		XMLName          xml.Name `xml:"KeyInfo"`
		Start            string   `xml:"Start"`
		Expiry           string   `xml:"Expiry"`
		DelegatedUserTid *string  `xml:"DelegatedUserTid"`
	}
	if len(body) > 64<<10 || xml.Unmarshal(body, &in) != nil {
		return Response{}, azerr.New(azerr.InvalidXMLDocument)
	}
	bad := func(node, value, msg string) error {
		return azerr.Newf(azerr.InvalidXMLNodeValue, "%s", msg).With("XmlNodeName", node).With("XmlNodeValue", value)
	}
	start := r.Now.UTC()
	if in.Start != "" {
		t, ok := auth.ParseSASTime(in.Start)
		if !ok {
			return Response{}, bad("Start", in.Start, "The value for one of the XML nodes is not in the correct format.")
		}
		start = t.UTC()
	}
	expiry, ok := auth.ParseSASTime(in.Expiry)
	if in.Expiry == "" || !ok {
		return Response{}, bad("Expiry", in.Expiry, "The value for one of the XML nodes is not in the correct format.")
	}
	expiry = expiry.UTC()
	if !expiry.After(start) {
		return Response{}, bad("Expiry", in.Expiry, "The expiry time must be after the start time.")
	}
	if expiry.After(r.Now.Add(auth.MaxDelegationKeyLifetime)) {
		return Response{}, bad("Expiry", in.Expiry, "The expiry time must be within seven days of the current time.")
	}
	key, ok := r.AccountKey()
	if !ok {
		return Response{}, azerr.Newf(azerr.ResourceNotFound, "The specified account does not exist.")
	}
	version := r.Version
	if version == "" {
		version = "2018-11-09"
	}
	k := auth.DelegationKey{
		OID: r.Principal.OID, TID: r.Principal.TID,
		Start: start.Truncate(time.Second).Format(auth.DelegationKeyTimeFormat), Expiry: expiry.Truncate(time.Second).Format(auth.DelegationKeyTimeFormat),
		Service: service, Version: version,
	}
	type out struct {
		XMLName                xml.Name `xml:"UserDelegationKey"`
		SignedOid              string   `xml:"SignedOid"`
		SignedTid              string   `xml:"SignedTid"`
		SignedStart            string   `xml:"SignedStart"`
		SignedExpiry           string   `xml:"SignedExpiry"`
		SignedService          string   `xml:"SignedService"`
		SignedVersion          string   `xml:"SignedVersion"`
		SignedDelegatedUserTid *string  `xml:"SignedDelegatedUserTid,omitempty"`
		Value                  string   `xml:"Value"`
	}
	if in.DelegatedUserTid != nil && *in.DelegatedUserTid != "" {
		k.DelegatedUserTID = *in.DelegatedUserTid
	}
	o := out{SignedOid: k.OID, SignedTid: k.TID, SignedStart: k.Start, SignedExpiry: k.Expiry, SignedService: k.Service, SignedVersion: k.Version}
	if k.DelegatedUserTID != "" {
		o.SignedDelegatedUserTid = &k.DelegatedUserTID
	}
	o.Value = base64.StdEncoding.EncodeToString(auth.DelegationKeyValue(key, k))
	return XML(http.StatusOK, o)
}
