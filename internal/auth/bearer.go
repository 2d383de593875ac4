package auth

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// Bearer tokens (Microsoft Entra ID, "Authorization: Bearer <JWT>"), in
// the emulator's basic mode (cerulean serve --oauth basic, as Azurite's
// --oauth basic): a token is accepted when it is a well-formed JWT issued
// by Entra ID for Azure Storage and valid now. Its signature is not
// verified: this server has no Entra ID tenant to fetch signing keys
// from, and the mode exists so that code using DefaultAzureCredential or
// another TokenCredential runs against a local server. It grants the
// account full access (no role assignments here). Never expose a server
// in this mode to anyone who should not have that access.

// storageAppID is the application id of Azure Storage, an audience
// Entra ID puts in tokens requested for it.
const storageAppID = "e406a681-f3d4-42a8-90b6-c2b029497af1"

// bearerSkew is how far nbf and exp may be off the server's clock.
const bearerSkew = 5 * time.Minute

// claims are the JWT claims checked.
type claims struct {
	Aud json.RawMessage `json:"aud"` // a string or an array of strings
	Iss string          `json:"iss"`
	Tid string          `json:"tid"`
	Nbf *float64        `json:"nbf"`
	Exp *float64        `json:"exp"`
}

// VerifyBearer checks the bearer token tok of a request to account's svc
// endpoint at time now, over HTTPS or not.
func VerifyBearer(tok, account string, svc Service, https bool, now time.Time) error {
	if !https {
		return bearerFailed("", "Bearer tokens are accepted over HTTPS only.")
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return bearerFailed("", "The token is not a JSON Web Token (header.payload.signature).")
	}
	var hdr struct {
		Typ string `json:"typ"`
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &hdr); err != nil || hdr.Alg == "" {
		return bearerFailed("", "The token's header is not base64url-encoded JSON naming an alg.")
	}
	var c claims
	if err := decodeSegment(parts[1], &c); err != nil {
		return bearerFailed("", "The token's payload is not base64url-encoded JSON.")
	}
	if !validIssuer(c.Iss) {
		return bearerFailed(c.Tid, "Issuer validation failed. Issuer did not match.")
	}
	if !validAudience(c.Aud, account, svc) {
		return bearerFailed(c.Tid, "Audience validation failed. Audience did not match.")
	}
	if c.Exp == nil || c.Nbf == nil {
		return bearerFailed(c.Tid, "Lifetime validation failed. The token has no nbf or exp claim.")
	}
	if nbf := time.Unix(int64(*c.Nbf), 0); now.Add(bearerSkew).Before(nbf) {
		return bearerFailed(c.Tid, "Lifetime validation failed. The token is not yet valid.")
	}
	if exp := time.Unix(int64(*c.Exp), 0); !now.Add(-bearerSkew).Before(exp) {
		return bearerFailed(c.Tid, "Lifetime validation failed. The token is expired.")
	}
	return nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// validIssuer accepts Entra ID's v1 and v2 issuers (any tenant, public
// and sovereign clouds).
func validIssuer(iss string) bool {
	for _, p := range []string{
		"https://sts.windows.net/", "https://login.microsoftonline.com/",
		"https://sts.chinacloudapi.cn/", "https://login.chinacloudapi.cn/",
		"https://sts.microsoftonline.us/", "https://login.microsoftonline.us/",
	} {
		if rest, ok := strings.CutPrefix(iss, p); ok && rest != "" {
			return true
		}
	}
	return false
}

// validAudience accepts Azure Storage's resource URI and application id,
// and the account's service endpoint in Azure's host form.
func validAudience(raw json.RawMessage, account string, svc Service) bool {
	var auds []string
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		auds = []string{one}
	} else if err := json.Unmarshal(raw, &auds); err != nil {
		return false
	}
	endpoint := "https://" + account + "." + svc.String() + ".core.windows.net"
	for _, a := range auds {
		switch strings.TrimSuffix(a, "/") {
		case "https://storage.azure.com", storageAppID, endpoint:
			return true
		}
	}
	return false
}

// bearerFailed is Azure's answer to a bearer token it does not accept: 401
// InvalidAuthenticationInfo with the reason, and the challenge naming where
// to get a token, as the service answers (Azure/azure-sdk-for-net#42859: its
// 401 "Please refer to the information in the www-authenticate header" with
// AuthenticationErrorDetail "Lifetime validation failed. The token is
// expired."; Azure/AzureStor#119: "Audience validation failed. Audience did
// not match." with WWW-Authenticate "Bearer
// authorization_uri=https://login.microsoftonline.com/<tenant>/oauth2/authorize
// resource_id=https://storage.azure.com").
func bearerFailed(tenant, detail string) *azerr.Error {
	if tenant == "" {
		tenant = "common"
	}
	return azerr.Newf(azerr.InvalidAuthenticationInfo, "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.").
		WithStatus(http.StatusUnauthorized).
		With(detailName, detail).
		WithHeader("WWW-Authenticate", "Bearer authorization_uri=https://login.microsoftonline.com/"+tenant+"/oauth2/authorize resource_id=https://storage.azure.com")
}
