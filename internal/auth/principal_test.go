package auth

import (
	"encoding/base64"
	"encoding/json"
	"testing"
)

// TestBearerPrincipalUPN: the user name of a token is its upn claim, else
// unique_name, else preferred_username; an application's token has none.
func TestBearerPrincipalUPN(t *testing.T) {
	tok := func(claims map[string]any) string {
		enc := base64.RawURLEncoding.EncodeToString
		b, _ := json.Marshal(claims)
		return enc([]byte(`{"typ":"JWT","alg":"RS256"}`)) + "." + enc(b) + "." + enc([]byte("sig"))
	}
	for _, c := range []struct {
		claims map[string]any
		want   string
	}{
		{map[string]any{"oid": "o", "upn": "u@x", "unique_name": "n@x", "preferred_username": "p@x"}, "u@x"},
		{map[string]any{"oid": "o", "unique_name": "n@x", "preferred_username": "p@x"}, "n@x"},
		{map[string]any{"oid": "o", "preferred_username": "p@x"}, "p@x"},
		{map[string]any{"oid": "o", "appid": "app"}, ""},
	} {
		p := BearerPrincipal(tok(c.claims))
		if p.OID != "o" || p.UPN != c.want {
			t.Errorf("%v: %+v, want UPN %q", c.claims, p, c.want)
		}
	}
}
