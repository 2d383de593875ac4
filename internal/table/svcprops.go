package table

import (
	"encoding/xml"
	"errors"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// Table service properties: logging, hour and minute metrics, CORS.
// Every top-level element is optional on Set; what is absent keeps its
// value.
type retentionXML struct {
	Enabled bool `xml:"Enabled"`
	Days    *int `xml:"Days,omitempty"`
}

type loggingXML struct {
	Version         string       `xml:"Version"`
	Delete          bool         `xml:"Delete"`
	Read            bool         `xml:"Read"`
	Write           bool         `xml:"Write"`
	RetentionPolicy retentionXML `xml:"RetentionPolicy"`
}

type metricsXML struct {
	Version         string       `xml:"Version"`
	Enabled         bool         `xml:"Enabled"`
	IncludeAPIs     *bool        `xml:"IncludeAPIs,omitempty"`
	RetentionPolicy retentionXML `xml:"RetentionPolicy"`
}

type corsRuleXML struct {
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedMethods  string `xml:"AllowedMethods"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds"`
}

type corsXML struct {
	Rules []corsRuleXML `xml:"CorsRule"`
}

type servicePropsXML struct {
	XMLName       xml.Name    `xml:"StorageServiceProperties"`
	Logging       *loggingXML `xml:"Logging,omitempty"`
	HourMetrics   *metricsXML `xml:"HourMetrics,omitempty"`
	MinuteMetrics *metricsXML `xml:"MinuteMetrics,omitempty"`
	Cors          *corsXML    `xml:"Cors,omitempty"`
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
	raw, err := tx.Get(svcPropsKey(acct))
	if errors.Is(err, kv.ErrNotFound) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	return p, xml.Unmarshal(raw, &p)
}

// getServiceProperties is Get Table Service Properties.
func (s *Service) getServiceProperties(w http.ResponseWriter, r *req) error {
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

func validRetention(p *retentionXML) bool {
	if p == nil || !p.Enabled {
		return true
	}
	return p.Days != nil && *p.Days >= 1 && *p.Days <= 365
}

// setServiceProperties is Set Table Service Properties.
func (s *Service) setServiceProperties(w http.ResponseWriter, r *req) error {
	raw, err := readBody(r.Request.Request, 64<<10)
	if err != nil {
		return err
	}
	var in servicePropsXML
	if err := xml.Unmarshal(raw, &in); err != nil {
		return azerr.New(azerr.InvalidXMLDocument)
	}
	if in.Cors != nil && len(in.Cors.Rules) > 5 {
		return azerr.Newf(azerr.InvalidXMLDocument, "At most five CORS rules may be set.")
	}
	for _, m := range []*metricsXML{in.HourMetrics, in.MinuteMetrics} {
		if m != nil && !validRetention(&m.RetentionPolicy) {
			return azerr.Newf(azerr.InvalidXMLDocument, "Retention days must be between 1 and 365.")
		}
	}
	if in.Logging != nil && !validRetention(&in.Logging.RetentionPolicy) {
		return azerr.Newf(azerr.InvalidXMLDocument, "Retention days must be between 1 and 365.")
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
		out, err := xml.Marshal(p)
		if err != nil {
			return err
		}
		return tx.Put(svcPropsKey(r.Account), out)
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

// getServiceStats is Get Table Service Stats: a single-site server is
// always in sync with itself.
func (s *Service) getServiceStats(w http.ResponseWriter, r *req) error {
	return server.WriteXML(w, http.StatusOK, statsXML{Status: "live", Sync: r.Now.UTC().Format(http.TimeFormat)})
}
