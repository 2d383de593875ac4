package blobrest

import (
	"errors"
	"net/http"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// ptErrCode returns the Azure error code of err, "" for nil.
func ptErrCode(err error) string {
	if err == nil {
		return ""
	}
	var ae *azerr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return "not an azerr: " + err.Error()
}

func TestSequenceConditions(t *testing.T) {
	tests := []struct {
		headers map[string]string
		seq     int64
		wantErr string
	}{
		{nil, 5, ""},
		{map[string]string{"x-ms-if-sequence-number-eq": "5"}, 5, ""},
		{map[string]string{"x-ms-if-sequence-number-eq": "4"}, 5, "SequenceNumberConditionNotMet"},
		{map[string]string{"x-ms-if-sequence-number-lt": "6"}, 5, ""},
		{map[string]string{"x-ms-if-sequence-number-lt": "5"}, 5, "SequenceNumberConditionNotMet"},
		{map[string]string{"x-ms-if-sequence-number-le": "5"}, 5, ""},
		{map[string]string{"x-ms-if-sequence-number-le": "4"}, 5, "SequenceNumberConditionNotMet"},
		{map[string]string{"x-ms-if-sequence-number-le": "9", "x-ms-if-sequence-number-eq": "4"}, 5, "SequenceNumberConditionNotMet"},
		{map[string]string{"x-ms-if-sequence-number-eq": "five"}, 5, "InvalidHeaderValue"},
		// In header order: an unmet le is reported before a malformed lt,
		// a malformed le before an unmet eq.
		{map[string]string{"x-ms-if-sequence-number-le": "4", "x-ms-if-sequence-number-lt": "x"}, 5, "SequenceNumberConditionNotMet"},
		{map[string]string{"x-ms-if-sequence-number-le": "x", "x-ms-if-sequence-number-eq": "4"}, 5, "InvalidHeaderValue"},
	}
	for i, tc := range tests {
		h := http.Header{}
		for k, v := range tc.headers {
			h.Set(k, v)
		}
		got := ptErrCode(parseSequenceConds(h).Check(tc.seq))
		if got != tc.wantErr {
			t.Errorf("case %d %v: got %q, want %q", i, tc.headers, got, tc.wantErr)
		}
	}
}
