package wire

import (
	"errors"
	"net/url"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// ParseIntQuery reads the integer query parameter name. Absent, it returns
// def. Errors:
//   - present but not a base-10 integer (including the empty string): 400
//     InvalidQueryParameterValue with QueryParameterName/Value (Common REST API
//     error codes; Azurite does the same);
//   - an integer outside [min, max] (or outside the int range): 400
//     OutOfRangeQueryParameterValue with QueryParameterName,
//     QueryParameterValue, MinimumAllowed and MaximumAllowed details,
//     exactly as the real Queue service answers numofmessages=100
//     (azure-sdk-for-js recordings, Windows-Azure-Queue, 2018-03-28) and as
//     Azurite does for maxresults, visibilitytimeout, numofmessages.
//
// List Blobs/Containers: maxresults <= 0 is a 400 (List Blobs,
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-blobs)
// (code not documented; OutOfRangeQueryParameterValue is used by analogy with
// the recorded Queue answer (inferred)), while values above 5000 are not an
// error: the service returns at most 5000 items (List Blobs; List
// Containers). Call ParseIntQuery(q, "maxresults", 1, math.MaxInt32, 5000)
// and clamp the result to 5000.
func ParseIntQuery(q url.Values, name string, min, max, def int) (int, error) {
	vals, ok := q[name]
	if !ok || len(vals) == 0 {
		return def, nil
	}
	v := vals[0]
	n, err := strconv.Atoi(v)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, outOfRangeQuery(name, v, min, max)
		}
		return 0, azerr.InvalidQuery(name, v)
	}
	if n < min || n > max {
		return 0, outOfRangeQuery(name, v, min, max)
	}
	return n, nil
}

func outOfRangeQuery(name, value string, min, max int) *azerr.Error {
	return azerr.New(azerr.OutOfRangeQueryParameterValue).
		With("QueryParameterName", name).
		With("QueryParameterValue", value).
		With("MinimumAllowed", strconv.Itoa(min)).
		With("MaximumAllowed", strconv.Itoa(max))
}
