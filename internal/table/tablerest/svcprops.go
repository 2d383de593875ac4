package tablerest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/cerulean-storage/cerulean/internal/table"
)

// Table service properties: logging, hour and minute metrics, CORS (XML,
// as for the other services); last writer wins.
func (s *Service) getServiceProperties(w http.ResponseWriter, r *req) error {
	out, err := s.t.GetServiceProperties(r.Context(), table.GetServicePropertiesInput{Account: r.Account})
	if err != nil {
		return err
	}
	return server.WriteXML(w, http.StatusOK, out.Properties)
}

// setServiceProperties is Set Table Service Properties.
func (s *Service) setServiceProperties(w http.ResponseWriter, r *req) error {
	if err := svcprops.CheckLength(r.ContentLength); err != nil {
		return err
	}
	p, err := svcprops.Parse(r.Body, svcprops.Table)
	if err != nil {
		return err
	}
	if _, err := s.t.SetServiceProperties(r.Context(), table.SetServicePropertiesInput{Account: r.Account, Properties: p}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// getServiceStats is Get Table Service Stats: a single-site server is
// always in sync with itself.
func (s *Service) getServiceStats(w http.ResponseWriter, r *req) error {
	out, err := s.t.GetServiceStats(r.Context(), table.GetServiceStatsInput{Account: r.Account})
	if err != nil {
		return err
	}
	return server.ServiceStats(w, r.Request, out.Stats)
}
