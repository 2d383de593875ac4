package queuerest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/queue"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// Queue service properties: Logging, HourMetrics, MinuteMetrics and Cors (Set
// Queue Service Properties,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-queue-service-properties);
// last writer wins.
func (s *Service) getQueueServiceProperties(w http.ResponseWriter, r *req) error {
	out, err := s.q.GetServiceProperties(r.Context(), queue.GetServicePropertiesInput{Account: r.Account})
	if err != nil {
		return err
	}
	return server.WriteXML(w, http.StatusOK, out.Properties)
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
	if _, err := s.q.SetServiceProperties(r.Context(), queue.SetServicePropertiesInput{Account: r.Account, Properties: p}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// getQueueServiceStats (Get Queue Service Stats,
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-queue-service-stats).
func (s *Service) getQueueServiceStats(w http.ResponseWriter, r *req) error {
	out, err := s.q.GetServiceStats(r.Context(), queue.GetServiceStatsInput{Account: r.Account})
	if err != nil {
		return err
	}
	return server.ServiceStats(w, r.Request, out.Stats)
}
