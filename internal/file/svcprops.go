package file

import (
	"context"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// getServiceProperties is Get File Service Properties: hour and minute
// metrics, CORS, share delete retention and protocol settings, as last
// set (defaults otherwise).
func (s *Service) getServiceProperties(w http.ResponseWriter, r *req) error {
	p, err := svcprops.Get(r.Context(), s.store, servicePropsKey(r.Account), svcprops.File)
	if err != nil {
		return err
	}
	return server.WriteXML(w, http.StatusOK, p)
}

// setServiceProperties is Set File Service Properties: elements present
// in the body replace the stored ones; 202 (azfile expects 202).
func (s *Service) setServiceProperties(w http.ResponseWriter, r *req) error {
	if err := svcprops.CheckLength(r.ContentLength); err != nil {
		return err
	}
	if err := svcprops.Set(r.Context(), s.store, servicePropsKey(r.Account), svcprops.File, r.Body); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// CORSRules returns the File service's CORS rules of account, for the
// front end's CORS handling (server.CORSRuler).
func (s *Service) CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error) {
	return svcprops.CORSRules(ctx, s.store, servicePropsKey(account), svcprops.File)
}
