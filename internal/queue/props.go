package queue

import (
	"context"
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Queue service properties: Logging, HourMetrics, MinuteMetrics and Cors (Set
// Queue Service Properties,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-queue-service-properties);
// last writer wins.
func (s *Service) getQueueServiceProperties(w http.ResponseWriter, r *req) error {
	p, err := s.GetServiceProperties(r.Context(), r.Account)
	if err != nil {
		return err
	}
	return server.WriteXML(w, http.StatusOK, p)
}

// setQueueServiceProperties: 202 Accepted (Set Queue Service Properties,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-queue-service-properties).
func (s *Service) setQueueServiceProperties(w http.ResponseWriter, r *req) error {
	if err := svcprops.CheckLength(r.ContentLength); err != nil {
		return err
	}
	p, err := svcprops.Parse(r.Body, svcprops.Queue)
	if err != nil {
		return err
	}
	if err := s.SetServiceProperties(r.Context(), r.Account, p); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// getQueueServiceStats (Get Queue Service Stats,
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-queue-service-stats).
func (s *Service) getQueueServiceStats(w http.ResponseWriter, r *req) error {
	return server.ServiceStats(w, r.Request, s.GetServiceStats(r.Context(), r.Account))
}

// CORSRules returns the account's Queue CORS rules (server.CORSRuler).
func (s *Service) CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error) {
	return svcprops.CORSRules(ctx, s.store, servicePropsKey(account), svcprops.Queue)
}
