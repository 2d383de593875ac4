package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// jwt builds an unsigned-looking token (the signature is not checked).
func jwt(t testing.TB, claims map[string]any) string {
	t.Helper()
	hdr, _ := json.Marshal(map[string]string{"typ": "JWT", "alg": "RS256"})
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc(hdr) + "." + enc(body) + "." + enc([]byte("signature"))
}

func TestVerifyBearer(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	good := func() map[string]any {
		return map[string]any{
			"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
			"tid": "72f988bf-86f1-41af-91ab-2d7cd011db47", "nbf": now.Add(-time.Hour).Unix(), "exp": now.Add(time.Hour).Unix(),
		}
	}
	with := func(k string, v any) map[string]any {
		c := good()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	for _, c := range []struct {
		name   string
		tok    string
		https  bool
		detail string // "" when accepted
	}{
		{"good", jwt(t, good()), true, ""},
		{"v2 issuer", jwt(t, with("iss", "https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0")), true, ""},
		{"audience with slash", jwt(t, with("aud", "https://storage.azure.com/")), true, ""},
		{"audience app id", jwt(t, with("aud", "e406a681-f3d4-42a8-90b6-c2b029497af1")), true, ""},
		{"audience account endpoint", jwt(t, with("aud", "https://acct.blob.core.windows.net")), true, ""},
		{"audience list", jwt(t, with("aud", []string{"https://vault.azure.net", "https://storage.azure.com"})), true, ""},
		{"clock skew", jwt(t, with("exp", now.Add(-4*time.Minute).Unix())), true, ""},
		{"over http", jwt(t, good()), false, "HTTPS only"},
		{"other account endpoint", jwt(t, with("aud", "https://other.blob.core.windows.net")), true, "Audience validation failed"},
		{"other service endpoint", jwt(t, with("aud", "https://acct.queue.core.windows.net")), true, "Audience validation failed"},
		{"vault audience", jwt(t, with("aud", "https://vault.azure.net")), true, "Audience validation failed"},
		{"no audience", jwt(t, with("aud", nil)), true, "Audience validation failed"},
		{"foreign issuer", jwt(t, with("iss", "https://evil.example/")), true, "Issuer validation failed"},
		{"issuer without tenant", jwt(t, with("iss", "https://sts.windows.net/")), true, "Issuer validation failed"},
		{"expired", jwt(t, with("exp", now.Add(-6*time.Minute).Unix())), true, "The token is expired"},
		{"not yet valid", jwt(t, with("nbf", now.Add(10*time.Minute).Unix())), true, "not yet valid"},
		{"no exp", jwt(t, with("exp", nil)), true, "no nbf or exp"},
		{"two parts", "abc.def", true, "not a JSON Web Token"},
		{"garbage payload", "eyJhbGciOiJSUzI1NiJ9.!!!.sig", true, "payload"},
		{"no alg", base64.RawURLEncoding.EncodeToString([]byte(`{"typ":"JWT"}`)) + "." + strings.Split(jwt(t, good()), ".")[1] + ".s", true, "header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := VerifyBearer(c.tok, "acct", Blob, c.https, now)
			if c.detail == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *azerr.Error
			if !errors.As(err, &e) {
				t.Fatalf("err %v, want an Azure error", err)
			}
			if e.Status != http.StatusUnauthorized || e.Code != azerr.InvalidAuthenticationInfo {
				t.Fatalf("%d %s, want 401 InvalidAuthenticationInfo", e.Status, e.Code)
			}
			if d := detailOf(e); !strings.Contains(d, c.detail) {
				t.Fatalf("detail %q, want %q", d, c.detail)
			}
			if !strings.HasPrefix(e.Headers["WWW-Authenticate"], "Bearer authorization_uri=https://login.microsoftonline.com/") {
				t.Fatalf("WWW-Authenticate %q", e.Headers["WWW-Authenticate"])
			}
		})
	}
}

func detailOf(e *azerr.Error) string {
	for _, d := range e.Details {
		if d.Name == detailName {
			return d.Value
		}
	}
	return ""
}

// FuzzVerifyBearer: any token is answered with nil or a 401, never a
// panic.
func FuzzVerifyBearer(f *testing.F) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	f.Add(jwt(f, map[string]any{"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/t/", "nbf": now.Unix(), "exp": now.Unix() + 3600}))
	f.Add("a.b.c")
	f.Add("..")
	f.Add(jwt(f, map[string]any{"aud": []any{1, 2}, "nbf": "x"}))
	f.Fuzz(func(t *testing.T, tok string) {
		err := VerifyBearer(tok, "acct", Table, true, now)
		var e *azerr.Error
		if err != nil && (!errors.As(err, &e) || e.Status != http.StatusUnauthorized) {
			t.Fatalf("%q: %v", tok, err)
		}
	})
}

// TestBearerPrincipalClaims: the principal of a token is its oid, tid and
// groups claims; a token that is not three segments, or whose claims are
// not JSON, is no principal.
func TestBearerPrincipalClaims(t *testing.T) {
	p := BearerPrincipal(jwt(t, map[string]any{"oid": "o1", "tid": "t1", "groups": []string{"g1", "g2"}}))
	if p.OID != "o1" || p.TID != "t1" || strings.Join(p.Groups, ",") != "g1,g2" {
		t.Fatalf("principal = %+v", p)
	}
	if p := BearerPrincipal(jwt(t, map[string]any{"oid": "o1"})); p.OID != "o1" || p.Groups != nil {
		t.Fatalf("no groups claim: %+v", p)
	}
	for _, bad := range []string{"a.b", "x.%%%.y", "x." + base64.RawURLEncoding.EncodeToString([]byte("not json")) + ".y"} {
		if p := BearerPrincipal(bad); p.OID != "" || p.Groups != nil {
			t.Fatalf("BearerPrincipal(%q) = %+v", bad, p)
		}
	}
}
