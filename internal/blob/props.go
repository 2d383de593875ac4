package blob

import (
	"encoding/xml"
	"io"
	"net/http"
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/google/uuid"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func newUUID() string { return uuid.NewString() }

// Service properties. Every top-level element is optional on Set: what is
// absent keeps its previous value.
type retentionXML struct {
	Enabled bool `xml:"Enabled"`
	Days    *int `xml:"Days,omitempty"`
	// AllowPermanentDelete only appears in DeleteRetentionPolicy.
	AllowPermanentDelete *bool `xml:"AllowPermanentDelete,omitempty" json:",omitempty"`
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

type staticWebsiteXML struct {
	Enabled              bool   `xml:"Enabled"`
	IndexDocument        string `xml:"IndexDocument,omitempty"`
	ErrorDocument404Path string `xml:"ErrorDocument404Path,omitempty"`
	DefaultIndexPath     string `xml:"DefaultIndexDocumentPath,omitempty"`
}

type servicePropsXML struct {
	XMLName               xml.Name          `xml:"StorageServiceProperties" json:"-"`
	Logging               *loggingXML       `xml:"Logging,omitempty"`
	HourMetrics           *metricsXML       `xml:"HourMetrics,omitempty"`
	MinuteMetrics         *metricsXML       `xml:"MinuteMetrics,omitempty"`
	Cors                  *corsXML          `xml:"Cors,omitempty"`
	DefaultServiceVersion *string           `xml:"DefaultServiceVersion,omitempty"`
	DeleteRetentionPolicy *retentionXML     `xml:"DeleteRetentionPolicy,omitempty"`
	StaticWebsite         *staticWebsiteXML `xml:"StaticWebsite,omitempty"`
}

func defaultServiceProps() servicePropsXML {
	return servicePropsXML{
		Logging:               &loggingXML{Version: "1.0"},
		HourMetrics:           &metricsXML{Version: "1.0"},
		MinuteMetrics:         &metricsXML{Version: "1.0"},
		Cors:                  &corsXML{},
		DeleteRetentionPolicy: &retentionXML{},
		StaticWebsite:         &staticWebsiteXML{},
	}
}

func loadServiceProps(tx kv.Tx, acct string) (servicePropsXML, error) {
	p := defaultServiceProps()
	_, err := getJSON(tx, servicePropsKey(acct), &p)
	return p, err
}

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

func (s *Service) setServiceProperties(w http.ResponseWriter, r *req) error {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<10+1))
	if err != nil {
		return bodyErr(err)
	}
	if len(raw) > 64<<10 {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	var in servicePropsXML
	if err := xml.Unmarshal(raw, &in); err != nil {
		return azerr.New(azerr.InvalidXMLDocument)
	}
	if in.Cors != nil && len(in.Cors.Rules) > 5 {
		return azerr.Newf(azerr.InvalidXMLDocument, "At most five CORS rules may be set.")
	}
	for _, rp := range []*retentionXML{in.DeleteRetentionPolicy, retentionOf(in.HourMetrics), retentionOf(in.MinuteMetrics)} {
		if !validRetention(rp) {
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
		if in.DefaultServiceVersion != nil {
			p.DefaultServiceVersion = in.DefaultServiceVersion
		}
		if in.DeleteRetentionPolicy != nil {
			p.DeleteRetentionPolicy = in.DeleteRetentionPolicy
		}
		if in.StaticWebsite != nil {
			p.StaticWebsite = in.StaticWebsite
		}
		return putJSON(tx, servicePropsKey(r.Account), &p)
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func retentionOf(m *metricsXML) *retentionXML {
	if m == nil {
		return nil
	}
	return &m.RetentionPolicy
}

func (s *Service) getAccountInfo(w http.ResponseWriter, r *req) error {
	h := w.Header()
	h.Set("x-ms-sku-name", "Standard_RAGRS")
	h.Set("x-ms-account-kind", "StorageV2")
	h.Set("x-ms-is-hns-enabled", "false")
	w.WriteHeader(http.StatusOK)
	return nil
}

type statsXML struct {
	XMLName xml.Name `xml:"StorageServiceStats"`
	Status  string   `xml:"GeoReplication>Status"`
	Sync    string   `xml:"GeoReplication>LastSyncTime"`
}

// getServiceStats: a single-site server is always in sync with itself.
func (s *Service) getServiceStats(w http.ResponseWriter, r *req) error {
	return server.WriteXML(w, http.StatusOK, statsXML{Status: "live", Sync: r.Now.UTC().Format(http.TimeFormat)})
}

// authorizeAnonymous lets an unauthenticated request through only where
// the container's public access level allows it: reads of blobs for
// "blob" and "container", and also listing and container properties for
// "container". Everything else is hidden as 404 ResourceNotFound (or 401
// for account-level operations), and nothing is read or written.
func (s *Service) authorizeAnonymous(r *req) error {
	if r.container == "" {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	var access string
	err := s.store.View(r.Context(), func(tx kv.Tx) error {
		c, err := loadContainer(tx, r.Account, r.container)
		if err != nil {
			return err
		}
		access = c.PublicAccess
		return nil
	})
	if err != nil && !azerr.Has(err, azerr.ContainerNotFound) {
		return err
	}
	comp := r.q.Get("comp")
	switch {
	case r.name != "" && (comp == "" || comp == "metadata" || comp == "blocklist" || comp == "pagelist") && (access == "blob" || access == "container"):
		return nil
	case r.name == "" && (comp == "" || comp == "list" || comp == "metadata") && access == "container":
		return nil
	}
	// Recorded real-service tests (the .NET SDK's ExistsAsync_Error) show
	// that from version 2019-12-12 the service answers such reads with
	// 401 NoAuthenticationInformation; older versions hide the resource
	// behind 404 ResourceNotFound.
	if r.Version >= "2019-12-12" {
		return azerr.New(azerr.NoAuthenticationInformation)
	}
	return azerr.New(azerr.ResourceNotFound)
}
