package file

import (
	"context"

	"github.com/cerulean-storage/cerulean/internal/svcprops"
)

// ServiceProperties returns the File Service Properties (hour and minute
// metrics, CORS, share delete retention and protocol settings; the
// implementation every service shares, of kind svcprops.File, which has
// no Get Service Stats), served by the route table's service-level
// entries through svcpropsrest.
func (s *Service) ServiceProperties() *svcprops.Service { return s.props }

// CORSRules returns the File service's CORS rules of account, for the
// front end's CORS handling (server.CORSRuler).
func (s *Service) CORSRules(ctx context.Context, account string) ([]svcprops.CORSRule, error) {
	return s.props.CORSRules(ctx, account)
}
