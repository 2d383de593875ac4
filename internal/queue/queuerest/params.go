package queuerest

import (
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Limits of the Queue service (Put Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-message; Get
// Messages,
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-messages;
// Update Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/update-message).
const (
	maxVisibilitySeconds = 7 * 24 * 3600 // 604800: visibilitytimeout upper bound
	defaultTTLSeconds    = 7 * 24 * 3600 // messagettl when absent
	defaultGetVisibility = 30            // Get Messages visibilitytimeout when absent
	maxNumOfMessages     = 32
	maxMessageBytes      = 64 << 10 // UTF-8 bytes of MessageText
	// maxBodyBytes bounds the XML body read for Put/Update Message: a 64 KiB
	// text can grow up to six times when XML-escaped (&quot;).
	maxBodyBytes = 8 * maxMessageBytes
	// infiniteTTLVersion is the first version accepting messagettl=-1 and
	// TTLs above seven days (Put Message,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/put-message).
	infiniteTTLVersion = "2017-07-29"
)

// putParams are the query parameters of Put Message.
type putParams struct {
	Visibility time.Duration
	// TTL is the time to live; 0 means the message never expires.
	TTL time.Duration
}

// parsePutParams reads visibilitytimeout and messagettl of Put Message:
//   - visibilitytimeout 0–604800 s, default 0; outside: 400
//     OutOfRangeQueryParameterValue (Put Message; Azurite answers the same);
//   - messagettl any positive number of seconds or -1 (never), default 7
//     days (Put Message,
//     https://learn.microsoft.com/en-us/rest/api/storageservices/put-message:
//     "The maximum time-to-live can be any positive number, as well as -1
//     indicating that the message does not expire"); a TTL too long to
//     date (beyond what a time.Duration or the message's expiry instant
//     holds, some 290 years) never expires either. Versions before
//     2017-07-29 allow 1–604800 only (Put Message); anything else: 400
//     OutOfRangeQueryParameterValue (not an integer: 400
//     InvalidQueryParameterValue);
//   - when messagettl is given and finite, visibilitytimeout must be
//     smaller: otherwise 400 InvalidQueryParameterValue naming
//     visibilitytimeout (Put Message: "visibilitytimeout should be set to a
//     value smaller than the time-to-live value"; Azurite answers the same).
func parsePutParams(q url.Values, version string) (putParams, error) {
	vt, err := wire.ParseIntQuery(q, "visibilitytimeout", 0, maxVisibilitySeconds, 0)
	if err != nil {
		return putParams{}, err
	}
	p := putParams{Visibility: time.Duration(vt) * time.Second, TTL: defaultTTLSeconds * time.Second}
	if !q.Has("messagettl") {
		return p, nil
	}
	raw := q.Get("messagettl")
	ttl, err := strconv.ParseInt(raw, 10, 64)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(raw, "-") {
		ttl, err = math.MaxInt64, nil // any positive number
	}
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return putParams{}, outOfRange("messagettl", raw, -1, math.MaxInt)
		}
		return putParams{}, azerr.InvalidQuery("messagettl", raw)
	}
	if version != "" && version < infiniteTTLVersion {
		if ttl < 1 || ttl > defaultTTLSeconds {
			return putParams{}, outOfRange("messagettl", raw, 1, defaultTTLSeconds)
		}
	} else if ttl == -1 {
		p.TTL = 0
		return p, nil
	} else if ttl < 1 {
		return putParams{}, outOfRange("messagettl", raw, -1, math.MaxInt)
	}
	if int64(vt) >= ttl {
		return putParams{}, azerr.Newf(azerr.InvalidQueryParameterValue,
			"The visibility timeout must be smaller than the message time to live.").
			With("QueryParameterName", "visibilitytimeout").With("QueryParameterValue", q.Get("visibilitytimeout"))
	}
	if ttl > int64(math.MaxInt64/time.Second) {
		p.TTL = 0 // beyond any date a message can carry: never expires
		return p, nil
	}
	p.TTL = time.Duration(ttl) * time.Second
	return p, nil
}

// parseGetParams reads numofmessages (1–32, default 1) and
// visibilitytimeout (1–604800 s, default 30) of Get Messages (Get Messages,
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-messages).
func parseGetParams(q url.Values) (n int, vt time.Duration, err error) {
	n, err = wire.ParseIntQuery(q, "numofmessages", 1, maxNumOfMessages, 1)
	if err != nil {
		return 0, 0, err
	}
	v, err := wire.ParseIntQuery(q, "visibilitytimeout", 1, maxVisibilitySeconds, defaultGetVisibility)
	if err != nil {
		return 0, 0, err
	}
	return n, time.Duration(v) * time.Second, nil
}

// parsePeekParams reads numofmessages (1–32, default 1) of Peek Messages.
func parsePeekParams(q url.Values) (int, error) {
	return wire.ParseIntQuery(q, "numofmessages", 1, maxNumOfMessages, 1)
}

// parsePeekOnly reads peekonly: absent or "false" selects Get Messages,
// "true" Peek Messages (any case); other values are 400
// InvalidQueryParameterValue (inferred).
func parsePeekOnly(q url.Values) (bool, error) {
	if !q.Has("peekonly") {
		return false, nil
	}
	v := q.Get("peekonly")
	switch strings.ToLower(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, azerr.InvalidQuery("peekonly", v)
}

// parseUpdateVisibility reads the required visibilitytimeout of Update
// Message: 0–604800 s (Update Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/update-message);
// absent: 400 MissingRequiredQueryParameter.
func parseUpdateVisibility(q url.Values) (time.Duration, error) {
	if !q.Has("visibilitytimeout") {
		return 0, azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "visibilitytimeout")
	}
	v, err := wire.ParseIntQuery(q, "visibilitytimeout", 0, maxVisibilitySeconds, 0)
	if err != nil {
		return 0, err
	}
	return time.Duration(v) * time.Second, nil
}

// parseReceiptParam reads the popreceipt of Delete and Update Message:
// absent is 400 MissingRequiredQueryParameter; a value that is not one of
// our receipts is 400 InvalidQueryParameterValue with the reason the real
// service gives, "Invalid pop receipt format" (MicrosoftDocs/feedback#2842,
// a recorded Azure response).
func parseReceiptParam(q url.Values) (queue.PopReceipt, error) {
	if !q.Has("popreceipt") {
		return queue.PopReceipt{}, azerr.New(azerr.MissingRequiredQueryParameter).With("QueryParameterName", "popreceipt")
	}
	v := q.Get("popreceipt")
	r, ok := queue.ParsePopReceipt(v)
	if !ok {
		return queue.PopReceipt{}, azerr.InvalidQuery("popreceipt", v).With("Reason", "Invalid pop receipt format")
	}
	return r, nil
}

// outOfRange is 400 OutOfRangeQueryParameterValue with the details
// wire.ParseIntQuery gives.
func outOfRange(name, value string, min, max int) *azerr.Error {
	return azerr.New(azerr.OutOfRangeQueryParameterValue).
		With("QueryParameterName", name).
		With("QueryParameterValue", value).
		With("MinimumAllowed", strconv.Itoa(min)).
		With("MaximumAllowed", strconv.Itoa(max))
}
