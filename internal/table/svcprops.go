package table

import (
	"context"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Table service properties: logging, hour and minute metrics, CORS (XML,
// as for the other services); last writer wins.
func (s *Service) getServiceProperties(w http.ResponseWriter, r *req) error {
	p, err := s.GetServiceProperties(r.Context(), r.Account)
	if err != nil {
		return err
	}
	return server.WriteXML(w, http.StatusOK, p)
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
	if err := s.SetServiceProperties(r.Context(), r.Account, p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// getServiceStats is Get Table Service Stats: a single-site server is
// always in sync with itself.
func (s *Service) getServiceStats(w http.ResponseWriter, r *req) error {
	return server.ServiceStats(w, r.Request, s.GetServiceStats(r.Context(), r.Account))
}

// CORSRules returns the account's Table CORS rules (server.CORSRuler).
func (s *Service) CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error) {
	return svcprops.CORSRules(ctx, s.store, svcPropsKey(account), svcprops.Table)
}
