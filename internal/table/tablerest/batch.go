package tablerest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/table"
	"github.com/google/uuid"
)

// An entity group transaction (POST /account/$batch) is a multipart/mixed
// body holding one changeset (itself multipart/mixed) of up to 100
// application/http requests on one table and one PartitionKey, each
// entity at most once; or a single GET of one entity. All writes run in
// one kv transaction: all succeed or none is applied, and readers never
// see part of a batch. A failed batch still answers 202, with a
// changeset response holding only the failing operation, its message
// prefixed by the 0-based index of that operation ("1:The specified
// entity already exists.").

// batchPart is one embedded HTTP request.
type batchPart struct {
	method    string
	url       *url.URL
	header    http.Header
	body      []byte
	contentID string
}

// opErr is the failure err of the batch's operation at index i.
func opErr(i int, err error) *table.OpError { return &table.OpError{Index: i, Err: err} }

// subResponse is one embedded HTTP response.
type subResponse struct {
	status int
	header [][2]string
	body   []byte
}

func badBatch(format string, args ...any) error {
	return azerr.Newf(azerr.InvalidInput, format, args...)
}

// batch is Entity Group Transaction.
func (s *Service) batch(r *req) (server.Response, error) {
	mt, params, err := mime.ParseMediaType(wire.Field(r.Header, "Content-Type"))
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return server.Response{}, badBatch("A batch request must be multipart/mixed with a boundary.")
	}
	body, err := readBody(r.Request.Request, maxBatchBodySize)
	if err != nil {
		return server.Response{}, err
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	first, err := mr.NextPart()
	if err != nil {
		return server.Response{}, badBatch("The batch request body is not a valid multipart/mixed payload.")
	}
	pmt, pparams, err := mime.ParseMediaType(wire.Field(first.Header, "Content-Type"))
	if err != nil {
		return server.Response{}, badBatch("A batch part has no valid Content-Type.")
	}
	var parts []batchPart
	query := false
	switch {
	case pmt == "multipart/mixed" && pparams["boundary"] != "":
		cr := multipart.NewReader(first, pparams["boundary"])
		for {
			p, err := cr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return server.Response{}, badBatch("The changeset is not a valid multipart/mixed payload.")
			}
			bp, err := readBatchPart(p)
			if err != nil {
				return server.Response{}, err
			}
			parts = append(parts, bp)
		}
	case pmt == "application/http":
		bp, err := readBatchPart(first)
		if err != nil {
			return server.Response{}, err
		}
		parts, query = []batchPart{bp}, true
	default:
		return server.Response{}, badBatch("A batch part must be a changeset (multipart/mixed) or a query (application/http).")
	}
	if _, err := mr.NextPart(); !errors.Is(err, io.EOF) {
		return server.Response{}, badBatch("A batch request may contain only one changeset or one query.")
	}
	if len(parts) == 0 {
		return server.Response{}, badBatch("The batch request contains no operations.")
	}
	if query {
		return s.batchQuery(r, parts[0]), nil
	}
	if len(parts) > maxBatchOps {
		return writeBatchFailure(r, parts, opErr(0, azerr.Newf(azerr.InvalidInput, "The batch request operation exceeds the maximum 100 changes per change set."))), nil
	}
	ops, err := s.batchOps(r, parts)
	if err != nil {
		var oe *table.OpError
		if errors.As(err, &oe) {
			return writeBatchFailure(r, parts, oe), nil
		}
		return server.Response{}, err
	}
	written, err := s.t.WriteBatch(r.Context(), table.WriteBatchInput{Account: r.Account, Writes: ops})
	results, ts := written.Entities, written.Timestamp
	if err != nil {
		var oe *table.OpError
		if errors.As(err, &oe) {
			return writeBatchFailure(r, parts, oe), nil
		}
		return server.Response{}, err
	}
	subs := make([]subResponse, len(ops))
	for i, o := range ops {
		sr := subResponse{status: http.StatusNoContent}
		sr.header = append(sr.header, contentIDHeader(parts[i])...)
		sr.header = append(sr.header, [2]string{"X-Content-Type-Options", "nosniff"}, [2]string{"Cache-Control", "no-cache"})
		switch o.Kind {
		case table.OpInsert:
			loc := baseURL(r) + "/" + o.Table + keyPredicate(o.PartitionKey, o.RowKey)
			sr.header = append(sr.header, [2]string{"ETag", formatETag(ts)}, [2]string{"Location", loc}, [2]string{"DataServiceId", loc})
			prefer := preference(parts[i].header)
			if prefer == "return-no-content" {
				sr.header = append(sr.header, [2]string{"Preference-Applied", "return-no-content"}, [2]string{"DataServiceVersion", "3.0;"})
				break
			}
			f, err := parseFormat(parts[i].header.Get("Accept"), parseQuery(parts[i].url.RawQuery).Get("$format"))
			if err != nil {
				f = minimalMeta
			}
			if prefer == "return-content" {
				sr.header = append(sr.header, [2]string{"Preference-Applied", "return-content"})
			}
			out := &jsonOut{f: f, base: baseURL(r), account: r.Account, table: o.Table}
			sr.status = http.StatusCreated
			sr.header = append(sr.header, [2]string{"DataServiceVersion", "3.0;"}, [2]string{"Content-Type", f.contentType()})
			sr.body = out.appendEntity(nil, results[i], true)
		case table.OpDelete:
			sr.header = append(sr.header, [2]string{"DataServiceVersion", "1.0;"})
		default:
			sr.header = append(sr.header, [2]string{"ETag", formatETag(ts)}, [2]string{"DataServiceVersion", "1.0;"})
		}
		subs[i] = sr
	}
	return batchResponse(subs, true), nil
}

// readBatchPart parses one application/http part: a request line with
// an absolute URL, headers, a blank line and the body (the rest of the
// part; the SDKs send no Content-Length).
func readBatchPart(p *multipart.Part) (batchPart, error) {
	if mt, _, err := mime.ParseMediaType(wire.Field(p.Header, "Content-Type")); err != nil || mt != "application/http" {
		return batchPart{}, badBatch("Every operation of a changeset must be an application/http part.")
	}
	data, err := io.ReadAll(io.LimitReader(p, maxBatchBodySize+1))
	if err != nil {
		return batchPart{}, badBatch("A changeset part could not be read.")
	}
	br := bufio.NewReader(bytes.NewReader(data))
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return batchPart{}, badBatch("A batch operation has no request line.")
	}
	fields := strings.Fields(line)
	if len(fields) != 3 || !strings.HasPrefix(fields[2], "HTTP/") {
		return batchPart{}, badBatch("The batch operation request line '%s' is not valid.", line)
	}
	u, err := url.Parse(fields[1])
	if err != nil {
		return batchPart{}, badBatch("The batch operation URL '%s' is not valid.", fields[1])
	}
	mh, err := tp.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return batchPart{}, badBatch("The batch operation headers are not valid.")
	}
	rest, _ := io.ReadAll(br)
	bp := batchPart{method: strings.ToUpper(fields[0]), url: u, header: http.Header(mh), body: bytes.TrimSpace(rest)}
	bp.contentID = bp.header.Get("Content-ID")
	return bp, nil
}

func contentIDHeader(p batchPart) [][2]string {
	if p.contentID == "" {
		return nil
	}
	return [][2]string{{"Content-ID", p.contentID}}
}

// partTarget resolves the table and keys a batch operation addresses.
func partTarget(r *req, p batchPart) (tbl, pk, rk string, keyed bool, err error) {
	path := strings.TrimPrefix(p.url.Path, "/")
	acct, rest, _ := strings.Cut(path, "/")
	if acct != r.Account {
		return "", "", "", false, badBatch("The batch operation URL '%s' does not address account '%s'.", p.url.String(), r.Account)
	}
	name, pred, hasPred := strings.Cut(rest, "(")
	if err := checkTableName(name); err != nil {
		return "", "", "", false, err
	}
	if hasPred && pred != ")" {
		pk, rk, ok := parseKeyPredicate("(" + pred)
		if !ok {
			return "", "", "", false, badBatch("The entity key predicate '(%s' could not be parsed.", pred)
		}
		return name, pk, rk, true, nil
	}
	return name, "", "", false, nil
}

// batchOps validates every operation before anything is applied.
func (s *Service) batchOps(r *req, parts []batchPart) ([]*table.EntityWrite, error) {
	ops := make([]*table.EntityWrite, 0, len(parts))
	seen := map[string]bool{}
	for i, p := range parts {
		hr := &http.Request{Method: p.method, Header: p.header}
		method, err := effectiveMethod(hr)
		if err != nil {
			return nil, opErr(i, err)
		}
		tbl, pk, rk, keyed, err := partTarget(r, p)
		if err != nil {
			return nil, opErr(i, err)
		}
		var kind table.OpKind
		switch {
		case method == http.MethodPost && !keyed:
			kind = table.OpInsert
		case method == http.MethodPut && keyed:
			kind = table.OpReplace
		case method == "MERGE" && keyed:
			kind = table.OpMerge
		case method == http.MethodDelete && keyed:
			kind = table.OpDelete
		case method == http.MethodGet:
			return nil, opErr(i, badBatch("A query must be the only operation of a batch and cannot be part of a changeset."))
		default:
			return nil, opErr(i, azerr.New(azerr.MethodNotAllowed))
		}
		if kind != table.OpDelete {
			if err := checkContentType(p.header); err != nil {
				return nil, opErr(i, err)
			}
		}
		o, err := buildWriteOp(kind, tbl, pk, rk, keyed, p.header, p.body)
		if err != nil {
			return nil, opErr(i, err)
		}
		ifMatch := ""
		if o.If.Set {
			ifMatch = p.header.Get("If-Match")
		}
		if err := checkBatchSAS(r, o.Kind, ifMatch, o.Table, o.PartitionKey, o.RowKey); err != nil {
			return nil, opErr(i, err)
		}
		if i > 0 && (!strings.EqualFold(o.Table, ops[0].Table) || o.PartitionKey != ops[0].PartitionKey) {
			return nil, opErr(i, azerr.New(azerr.CommandsInBatchActOnDifferentPartitions))
		}
		if seen[o.RowKey] {
			return nil, opErr(i, azerr.Newf(azerr.InvalidDuplicateRow, "A command with RowKey '%s' is already present in the batch. An entity can appear only once in a batch.", o.RowKey))
		}
		seen[o.RowKey] = true
		ops = append(ops, o)
	}
	return ops, nil
}

// errorSub renders an error as an embedded OData JSON error response,
// its message prefixed with "index:" when index >= 0.
func errorSub(r *req, p *batchPart, index int, err error) subResponse {
	e, ok := azerr.As(err)
	if !ok {
		e = azerr.New(azerr.InternalError)
	}
	msg := e.Message
	if index >= 0 {
		msg = strconv.Itoa(index) + ":" + msg
	}
	body := []byte(`{"odata.error":{"code":`)
	body = appendJSONString(body, e.Code)
	body = append(body, `,"message":{"lang":"en-US","value":`...)
	body = appendJSONString(body, msg+"\nRequestId:"+r.ID+"\nTime:"+r.Now.UTC().Format("2006-01-02T15:04:05.0000000Z"))
	body = append(body, "}}}"...)
	sr := subResponse{status: e.Status}
	if p != nil {
		sr.header = append(sr.header, contentIDHeader(*p)...)
	}
	sr.header = append(sr.header,
		[2]string{"X-Content-Type-Options", "nosniff"},
		[2]string{"Cache-Control", "no-cache"},
		[2]string{"DataServiceVersion", "3.0;"},
		[2]string{"Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"})
	sr.body = body
	return sr
}

func writeBatchFailure(r *req, parts []batchPart, oe *table.OpError) server.Response {
	var p *batchPart
	if oe.Index < len(parts) {
		p = &parts[oe.Index]
	}
	return batchResponse([]subResponse{errorSub(r, p, oe.Index, oe.Err)}, true)
}

// batchResponse is the 202 multipart/mixed response. With
// changeset, the sub-responses are wrapped in one changeset response (the
// form aztables and the other SDKs parse: first line the batch boundary,
// first part's first line the changeset boundary, CRLF line ends).
func batchResponse(subs []subResponse, changeset bool) server.Response {
	batchB := "batchresponse_" + uuid.NewString()
	var b bytes.Buffer
	b.WriteString("--" + batchB + "\r\n")
	inner := batchB
	if changeset {
		inner = "changesetresponse_" + uuid.NewString()
		b.WriteString("Content-Type: multipart/mixed; boundary=" + inner + "\r\n\r\n")
		b.WriteString("--" + inner + "\r\n")
	}
	for i, sr := range subs {
		if i > 0 {
			b.WriteString("--" + inner + "\r\n")
		}
		b.WriteString("Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString("HTTP/1.1 " + strconv.Itoa(sr.status) + " " + http.StatusText(sr.status) + "\r\n")
		for _, h := range sr.header {
			b.WriteString(h[0] + ": " + h[1] + "\r\n")
		}
		b.WriteString("\r\n")
		b.Write(sr.body)
		b.WriteString("\r\n")
	}
	if changeset {
		b.WriteString("--" + inner + "--\r\n")
	}
	b.WriteString("--" + batchB + "--\r\n")
	return server.Response{Status: http.StatusAccepted, Body: b.Bytes(), ContentType: "multipart/mixed; boundary=" + batchB,
		Header: []server.HeaderField{{Name: "Cache-Control", Value: "no-cache"}, {Name: "X-Content-Type-Options", Value: "nosniff"}}}
}

// batchQuery answers a batch holding a single GET of one entity.
func (s *Service) batchQuery(r *req, p batchPart) server.Response {
	sub := func() subResponse {
		if p.method != http.MethodGet {
			return errorSub(r, &p, 0, badBatch("An operation outside a changeset must be a query (GET)."))
		}
		tbl, pk, rk, keyed, err := partTarget(r, p)
		if err != nil {
			return errorSub(r, &p, 0, err)
		}
		if !keyed {
			return errorSub(r, &p, 0, badBatch("A query in a batch must address a single entity."))
		}
		if err := checkBatchSAS(r, -1, "", tbl, pk, rk); err != nil {
			return errorSub(r, &p, 0, err)
		}
		f, err := parseFormat(p.header.Get("Accept"), parseQuery(p.url.RawQuery).Get("$format"))
		if err != nil {
			return errorSub(r, &p, 0, err)
		}
		sel, err := parseSelect(parseQuery(p.url.RawQuery).Get("$select"))
		if err != nil {
			return errorSub(r, &p, 0, err)
		}
		got, err := s.t.GetEntity(r.Context(), table.GetEntityInput{EntityKey: table.EntityKey{Account: r.Account, Table: tbl, PartitionKey: pk, RowKey: rk}})
		e := got.Entity
		if err != nil {
			if _, ok := azerr.As(err); !ok {
				s.log.ErrorContext(r.Context(), "batch query failed", "err", err)
			}
			return errorSub(r, &p, 0, err)
		}
		out := &jsonOut{f: f, base: baseURL(r), account: r.Account, table: tbl, sel: sel}
		return subResponse{status: http.StatusOK, header: append(contentIDHeader(p),
			[2]string{"X-Content-Type-Options", "nosniff"},
			[2]string{"Cache-Control", "no-cache"},
			[2]string{"DataServiceVersion", "3.0;"},
			[2]string{"Content-Type", f.contentType()},
			[2]string{"ETag", formatETag(e.Timestamp())}), body: out.appendEntity(nil, e, true)}
	}()
	return batchResponse([]subResponse{sub}, false)
}
