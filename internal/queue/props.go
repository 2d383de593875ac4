package queue

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// Queue service properties: Logging, HourMetrics, MinuteMetrics and Cors
// [D: Set Queue Service Properties; S: azqueue StorageServiceProperties].
// On Set, every top-level element is optional and an absent one keeps its
// previous value; the whole write is last writer wins.
type retentionXML struct {
	Enabled bool `xml:"Enabled" json:"e"`
	Days    *int `xml:"Days,omitempty" json:"d,omitempty"`
}

type loggingXML struct {
	Version         string       `xml:"Version" json:"v"`
	Delete          bool         `xml:"Delete" json:"d"`
	Read            bool         `xml:"Read" json:"r"`
	Write           bool         `xml:"Write" json:"w"`
	RetentionPolicy retentionXML `xml:"RetentionPolicy" json:"rp"`
}

type metricsXML struct {
	Version         string       `xml:"Version" json:"v"`
	Enabled         bool         `xml:"Enabled" json:"e"`
	IncludeAPIs     *bool        `xml:"IncludeAPIs,omitempty" json:"i,omitempty"`
	RetentionPolicy retentionXML `xml:"RetentionPolicy" json:"rp"`
}

type corsRuleXML struct {
	AllowedOrigins  string `xml:"AllowedOrigins" json:"o"`
	AllowedMethods  string `xml:"AllowedMethods" json:"m"`
	AllowedHeaders  string `xml:"AllowedHeaders" json:"h"`
	ExposedHeaders  string `xml:"ExposedHeaders" json:"x"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds" json:"a"`
}

type corsXML struct {
	Rules []corsRuleXML `xml:"CorsRule" json:"r"`
}

type servicePropsXML struct {
	XMLName       xml.Name    `xml:"StorageServiceProperties" json:"-"`
	Logging       *loggingXML `xml:"Logging,omitempty" json:"l,omitempty"`
	HourMetrics   *metricsXML `xml:"HourMetrics,omitempty" json:"hm,omitempty"`
	MinuteMetrics *metricsXML `xml:"MinuteMetrics,omitempty" json:"mm,omitempty"`
	Cors          *corsXML    `xml:"Cors,omitempty" json:"c,omitempty"`
}

func defaultServiceProps() servicePropsXML {
	return servicePropsXML{
		Logging:       &loggingXML{Version: "1.0"},
		HourMetrics:   &metricsXML{Version: "1.0"},
		MinuteMetrics: &metricsXML{Version: "1.0"},
		Cors:          &corsXML{},
	}
}

func loadServiceProps(tx kv.Tx, acct string) (servicePropsXML, error) {
	p := defaultServiceProps()
	raw, err := tx.Get(servicePropsKey(acct))
	if errors.Is(err, kv.ErrNotFound) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("decoding queue service properties of %s: %w", acct, err)
	}
	return p, nil
}

func (s *Service) getQueueServiceProperties(w http.ResponseWriter, r *req) error {
	var p servicePropsXML
	err := s.store.View(r.Context(), func(tx kv.Tx) (err error) {
		p, err = loadServiceProps(tx, r.Account)
		return err
	})
	if err != nil {
		return err
	}
	return server.WriteXML(w, http.StatusOK, p)
}

// maxCORSRules is Azure's limit per service [D: CORS support].
const maxCORSRules = 5

// parseServiceProps validates a Set Queue Service Properties body:
// malformed XML, more than five CORS rules or retention days outside
// 1–365 for an enabled policy are 400 InvalidXmlDocument [D; code I, as
// for Blob].
func parseServiceProps(body []byte) (servicePropsXML, error) {
	var in servicePropsXML
	if err := xml.Unmarshal(body, &in); err != nil || in.XMLName.Local != "StorageServiceProperties" {
		return in, azerr.New(azerr.InvalidXMLDocument)
	}
	if in.Cors != nil && len(in.Cors.Rules) > maxCORSRules {
		return in, azerr.Newf(azerr.InvalidXMLDocument, "At most %d CORS rules may be set.", maxCORSRules)
	}
	var rps []*retentionXML
	if in.Logging != nil {
		rps = append(rps, &in.Logging.RetentionPolicy)
	}
	for _, m := range []*metricsXML{in.HourMetrics, in.MinuteMetrics} {
		if m != nil {
			rps = append(rps, &m.RetentionPolicy)
		}
	}
	for _, rp := range rps {
		if rp.Enabled && (rp.Days == nil || *rp.Days < 1 || *rp.Days > 365) {
			return in, azerr.Newf(azerr.InvalidXMLDocument, "Retention days must be between 1 and 365.")
		}
	}
	return in, nil
}

// setQueueServiceProperties: 202 Accepted [S].
func (s *Service) setQueueServiceProperties(w http.ResponseWriter, r *req) error {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil {
		return azerr.Newf(azerr.InvalidInput, "The request body could not be read.")
	}
	if len(raw) > 64<<10 {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	in, err := parseServiceProps(raw)
	if err != nil {
		return err
	}
	err = s.store.Update(r.Context(), func(tx kv.Tx) error {
		p, err := loadServiceProps(tx, r.Account)
		if err != nil {
			return err
		}
		if in.Logging != nil {
			p.Logging = in.Logging
		}
		if in.HourMetrics != nil {
			p.HourMetrics = in.HourMetrics
		}
		if in.MinuteMetrics != nil {
			p.MinuteMetrics = in.MinuteMetrics
		}
		if in.Cors != nil {
			p.Cors = in.Cors
		}
		out, err := json.Marshal(&p)
		if err != nil {
			return err
		}
		return tx.Put(servicePropsKey(r.Account), out)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

type statsXML struct {
	XMLName xml.Name `xml:"StorageServiceStats"`
	Status  string   `xml:"GeoReplication>Status"`
	Sync    string   `xml:"GeoReplication>LastSyncTime"`
}

// getQueueServiceStats: a single-site server is always in sync with
// itself, so replication is "live" and last synced now.
func (s *Service) getQueueServiceStats(w http.ResponseWriter, r *req) error {
	return server.WriteXML(w, http.StatusOK, statsXML{Status: "live", Sync: r.Now.UTC().Format(http.TimeFormat)})
}
