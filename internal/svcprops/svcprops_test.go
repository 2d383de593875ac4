package svcprops

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		kind       Kind
		code       string
		status     int
	}{
		{"cors", `<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`, Blob, "", 0},
		{"malformed", `<StorageServiceProperties><Cors>`, Queue, azerr.InvalidXMLDocument, 400},
		{"wrong root", `<Other/>`, Table, azerr.InvalidXMLDocument, 400},
		{"six cors rules", `<StorageServiceProperties><Cors>` + strings.Repeat(`<CorsRule><AllowedOrigins>*</AllowedOrigins></CorsRule>`, 6) + `</Cors></StorageServiceProperties>`, Blob, azerr.InvalidXMLDocument, 400},
		{"retention 0 days", `<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>0</Days></RetentionPolicy></HourMetrics></StorageServiceProperties>`, Queue, azerr.InvalidXMLDocument, 400},
		{"retention no days", `<StorageServiceProperties><DeleteRetentionPolicy><Enabled>true</Enabled></DeleteRetentionPolicy></StorageServiceProperties>`, Blob, azerr.InvalidXMLDocument, 400},
		{"retention 366", `<StorageServiceProperties><Logging><RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy></Logging></StorageServiceProperties>`, Table, azerr.InvalidXMLDocument, 400},
		{"too large", `<StorageServiceProperties>` + strings.Repeat(" ", maxBody) + `</StorageServiceProperties>`, Blob, azerr.RequestBodyTooLarge, 413},
	} {
		_, err := Parse(strings.NewReader(tc.body), tc.kind)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		e, ok := azerr.As(err)
		if !ok || e.Code != tc.code || e.Status != tc.status {
			t.Errorf("%s: got %v, want %d %s", tc.name, err, tc.status, tc.code)
		}
	}
}

func TestMergeKeepsAbsentElementsAndDropsForeignOnes(t *testing.T) {
	p := Default(Queue)
	in, err := Parse(strings.NewReader(`<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>a</AllowedOrigins></CorsRule></Cors><DeleteRetentionPolicy><Enabled>true</Enabled><Days>3</Days></DeleteRetentionPolicy></StorageServiceProperties>`), Queue)
	if err != nil {
		t.Fatal(err)
	}
	p.Merge(in)
	if len(p.Cors.Rules) != 1 || p.Logging == nil || p.Logging.Version != "1.0" || p.DeleteRetentionPolicy != nil {
		t.Fatalf("merged: %+v", p)
	}
	out, err := xml.Marshal(p)
	if err != nil || strings.Contains(string(out), "DeleteRetentionPolicy") || !strings.Contains(string(out), "<AllowedOrigins>a</AllowedOrigins>") {
		t.Fatalf("queue document %s (%v)", out, err)
	}
	b := Default(Blob)
	if b.DeleteRetentionPolicy == nil || b.StaticWebsite == nil {
		t.Fatalf("blob defaults: %+v", b)
	}
}
