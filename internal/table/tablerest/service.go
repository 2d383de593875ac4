// Package tablerest is the Table service's REST front end: the route
// table (routes.go), the parsing of URLs, headers, OData query options
// and JSON bodies into the typed inputs of the internal/table domain,
// SAS authorization, entity group transaction (batch) framing, and the
// OData JSON and header rendering of its outputs. Nothing here opens a
// kv transaction; every operation is one call of a table.Service method.
package tablerest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/table"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Service serves the Table REST API (a server.AzureHandler and
// server.CORSRuler) over one table.Service.
type Service struct {
	t   *table.Service
	log *slog.Logger
}

// New returns the REST front end of t; log receives what the batch
// renderer logs (internal errors inside a changeset).
func New(t *table.Service, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{t: t, log: log}
}

// CORSRules returns the account's Table CORS rules (server.CORSRuler).
func (s *Service) CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error) {
	return s.t.ServiceProperties().CORSRules(ctx, account)
}

// ServiceProperties returns the Table Service Properties and Stats, which
// the route table's service-level entries serve through svcpropsrest.
func (s *Service) ServiceProperties() *svcprops.Service { return s.t.ServiceProperties() }

// req is a parsed Table request.
type req struct {
	*server.Request
	q      url.Values
	method string    // after X-HTTP-Method
	table  string    // table name from the path ("" for service/Tables)
	pk, rk string    // entity keys from the path
	keyed  bool      // the path addressed one entity
	route  *route    // the routed operation (tableRoutes)
	sas    *auth.SAS // the verified, effective SAS of a SAS request
}

// parseQuery is url.ParseQuery without its rejection of ';': OData
// values such as $format=application/json;odata=nometadata may arrive
// unescaped.
func parseQuery(raw string) url.Values {
	q := url.Values{}
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k1, err1 := url.QueryUnescape(k)
		v1, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			k1, v1 = k, v
		}
		q.Add(k1, v1)
	}
	return q
}

// effectiveMethod applies X-HTTP-Method, which only POST may carry.
func effectiveMethod(hr *http.Request) (string, error) {
	vals := hr.Header.Values("X-HTTP-Method")
	if len(vals) == 0 {
		if hr.Method == "PATCH" {
			return "MERGE", nil
		}
		return hr.Method, nil
	}
	if hr.Method != http.MethodPost {
		return "", azerr.New(azerr.XMethodNotUsingPost)
	}
	if len(vals) > 1 || strings.Contains(vals[0], ",") {
		return "", azerr.New(azerr.XMethodIncorrectCount)
	}
	switch v := strings.ToUpper(strings.TrimSpace(vals[0])); v {
	case "MERGE", "PATCH":
		return "MERGE", nil
	case http.MethodPut, http.MethodDelete:
		return v, nil
	}
	return "", azerr.New(azerr.XMethodIncorrectValue)
}

// resourcePath returns the part of the decoded path after the account.
func resourcePath(sr *server.Request) string {
	p := strings.TrimPrefix(sr.URL.Path, "/")
	_, rest, _ := strings.Cut(p, "/")
	return rest
}

// checkTableName applies Azure's table name rules: 3–63 letters and
// digits starting with a letter, not "tables". An alphanumeric name of
// the wrong length is 400 OutOfRangeInput, anything else 400
// InvalidResourceName. (Checked on every request: byte loops, not
// regular expressions, which were 2% of the server's CPU.)
func checkTableName(name string) error {
	if (len(name) < 3 || len(name) > 63) && alnum(name) {
		return azerr.Newf(azerr.OutOfRangeInput, "The specified resource name length is not within the permissible limits.")
	}
	if len(name) < 3 || len(name) > 63 || !letter(name[0]) || !alnum(name) || strings.EqualFold(name, "tables") {
		return azerr.Newf(azerr.InvalidResourceName, "The specifed resource name contains invalid characters.")
	}
	return nil
}

func letter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// alnum reports whether s is non-empty and all ASCII letters and digits.
func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !letter(s[i]) && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return s != ""
}

// parseTablesPredicate parses "('name')".
func parseTablesPredicate(s string) (string, bool) {
	if !strings.HasPrefix(s, "('") || !strings.HasSuffix(s, "')") || len(s) < 4 {
		return "", false
	}
	name := s[2 : len(s)-2]
	if strings.ContainsAny(name, "'") {
		return "", false
	}
	return name, true
}

// parseKeyPredicate parses "(PartitionKey='pk',RowKey='rk')" (either
// order) where a doubled quote inside a value stands for one quote.
func parseKeyPredicate(s string) (pk, rk string, ok bool) {
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return "", "", false
	}
	s = s[1 : len(s)-1]
	var gotPK, gotRK bool
	for i := 0; i < 2; i++ {
		if i == 1 {
			if !strings.HasPrefix(s, ",") {
				return "", "", false
			}
			s = s[1:]
		}
		name, rest, found := strings.Cut(s, "=")
		if !found || !strings.HasPrefix(rest, "'") {
			return "", "", false
		}
		val, after, ok := unquote(rest)
		if !ok {
			return "", "", false
		}
		switch {
		case name == "PartitionKey" && !gotPK:
			pk, gotPK = val, true
		case name == "RowKey" && !gotRK:
			rk, gotRK = val, true
		default:
			return "", "", false
		}
		s = after
	}
	return pk, rk, s == "" && gotPK && gotRK
}

// unquote reads a quoted value at the start of s.
func unquote(s string) (val, rest string, ok bool) {
	var b strings.Builder
	i := 1
	for i < len(s) {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			return "", "", false
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i < len(s) && s[i] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i:], true
	}
	return "", "", false
}

// baseURL is the account URL as the client addressed it, for odata.id
// and odata.metadata.
func baseURL(r *req) string {
	return r.AccountURL()
}

func (r *req) format() (format, error) {
	return parseFormat(wire.Field(r.Header, "Accept"), r.q.Get("$format"))
}

// readBody reads at most limit bytes of the request body.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, azerr.New(azerr.RequestBodyTooLarge)
		}
		if _, ok := azerr.As(err); ok {
			return nil, err // the front end's own verdict (a stalled body), kept whole
		}
		return nil, azerr.Newf(azerr.InvalidInput, "The request body could not be read.")
	}
	if int64(len(b)) > limit {
		return nil, azerr.New(azerr.RequestBodyTooLarge)
	}
	return b, nil
}

// checkContentType rejects Atom payloads.
func checkContentType(h http.Header) error {
	ct := strings.ToLower(h.Get("Content-Type"))
	if strings.Contains(ct, "atom") || strings.HasPrefix(ct, "application/xml") {
		return azerr.New(azerr.AtomFormatNotSupported)
	}
	return nil
}

// jsonResponse is a JSON answer of format f: head (the operation's own
// headers), then the OData ones.
func jsonResponse(f format, status int, body []byte, head ...server.HeaderField) server.Response {
	return server.Response{Status: status, Body: body, ContentType: f.contentType(),
		Header: append(head, server.HeaderField{Name: "Dataserviceversion", Value: "3.0;"},
			server.HeaderField{Name: "X-Content-Type-Options", Value: "nosniff"},
			server.HeaderField{Name: "Cache-Control", Value: "no-cache"})}
}

// preference reads the Prefer header: "return-content",
// "return-no-content" or "".
func preference(h http.Header) string {
	for _, v := range h.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(p)) {
			case "return-no-content":
				return "return-no-content"
			case "return-content":
				return "return-content"
			}
		}
	}
	return ""
}

// handler is one REST operation: a method of Service.
type handler = func(s *Service, r *req) (server.Response, error)

// route is one entry of the Table route table.
type route = server.Route[handler]

// The resource levels of a Table URL (after the account):
const (
	lService     server.Level = 1 << iota // "" (with restype=service)
	lBatch                                // $batch
	lTables                               // Tables, Tables()
	lTable                                // Tables('name')
	lEntities                             // name
	lEntitiesAll                          // name()
	lEntity                               // name(PartitionKey='…',RowKey='…')
)

// Route flags.
const (
	// fSASTokenTable: the URL names no table, its parts do (an entity
	// group transaction); a service SAS is checked for the table it is
	// for (an account SAS for none), and each part's table against the
	// token's (checkBatchSAS).
	fSASTokenTable uint32 = 1 << iota
)
