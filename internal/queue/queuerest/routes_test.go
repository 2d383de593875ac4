package queuerest

import (
	"errors"
	"net/http"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/server/routetest"
)

// TestRoutesTable checks the route table's invariants: a SAS rule or
// Shared Key only for every entry, names shared only by variants of one
// operation, and no entry shadowed by an earlier one.
func TestRoutesTable(t *testing.T) {
	for _, err := range queueRoutes.Verify() {
		t.Error(err)
	}
	routetest.Rules(t, queueRoutes, nil, "getUserDelegationKey")
}

// routeDispatch checks the cases against the Queue route table.
func routeDispatch(t *testing.T, cases []routetest.Case) {
	routetest.Dispatch(t, "127.0.0.1:10001", Operations(), func(hr *http.Request) (string, error) {
		r := parseReq(&server.Request{Request: hr})
		rt, err := (*Service)(nil).route(r)
		if err != nil {
			return "", err
		}
		if r.Op != rt.Name || r.route != rt {
			return "", errors.New("operation not recorded")
		}
		return rt.Name, nil
	}, cases)
}

// TestRoutesDispatch: a representative request of every operation
// dispatches to it, and the URLs no operation takes keep their errors.
func TestRoutesDispatch(t *testing.T) {
	const a = "/devstoreaccount1"
	c := routetest.C
	cases := []routetest.Case{
		c("GET", a+"/?comp=list", nil, "listQueues", ""),
		c("GET", a+"/?comp=list&restype=service", nil, "listQueues", ""),
		c("GET", a+"/?restype=service&comp=properties", nil, "getQueueServiceProperties", ""),
		c("PUT", a+"/?restype=service&comp=properties", nil, "setQueueServiceProperties", ""),
		c("GET", a+"/?restype=service&comp=stats", nil, "getQueueServiceStats", ""),
		c("POST", a+"/?restype=service&comp=userdelegationkey", nil, "getUserDelegationKey", ""),
		c("PUT", a+"/qu1", nil, "createQueue", ""),
		c("DELETE", a+"/qu1", nil, "deleteQueue", ""),
		c("GET", a+"/qu1?comp=metadata", nil, "getQueueMetadata", ""),
		c("HEAD", a+"/qu1?comp=metadata", nil, "getQueueMetadata", ""),
		c("PUT", a+"/qu1?comp=metadata", nil, "setQueueMetadata", ""),
		c("GET", a+"/qu1?comp=acl", nil, "getQueueACL", ""),
		c("HEAD", a+"/qu1?comp=acl", nil, "getQueueACL", ""),
		c("PUT", a+"/qu1?comp=acl", nil, "setQueueACL", ""),
		c("POST", a+"/qu1/messages", nil, "putMessage", ""),
		c("POST", a+"/qu1/messages?comp=x", nil, "putMessage", ""),
		c("GET", a+"/qu1/messages?peekonly=true", nil, "peekMessages", ""),
		c("GET", a+"/qu1/messages?peekonly=TRUE", nil, "peekMessages", ""),
		c("GET", a+"/qu1/messages", nil, "getMessages", ""),
		c("GET", a+"/qu1/messages?peekonly=false&numofmessages=3", nil, "getMessages", ""),
		c("DELETE", a+"/qu1/messages", nil, "clearMessages", ""),
		c("DELETE", a+"/qu1/messages/id1?popreceipt=p", nil, "deleteMessage", ""),
		c("PUT", a+"/qu1/messages/id1?popreceipt=p&visibilitytimeout=0", nil, "updateMessage", ""),

		// No operation: the errors of the URL.
		c("GET", a+"/", nil, "", azerr.UnsupportedHTTPVerb),
		c("GET", a+"/?comp=nothing", nil, "", azerr.InvalidQueryParameterValue),
		c("GET", a+"/Bad_Name", nil, "", azerr.InvalidResourceName),
		c("GET", a+"/qu1", nil, "", azerr.UnsupportedHTTPVerb),
		c("POST", a+"/qu1?comp=metadata", nil, "", azerr.InvalidQueryParameterValue),
		c("GET", a+"/qu1/messages?peekonly=maybe", nil, "", azerr.InvalidQueryParameterValue),
		c("HEAD", a+"/qu1/messages", nil, "", azerr.UnsupportedHTTPVerb),
		c("GET", a+"/qu1/messages/", nil, "", azerr.InvalidURI),
		c("GET", a+"/qu1/messages/id1", nil, "", azerr.UnsupportedHTTPVerb),
		c("DELETE", a+"/qu1/messages/id1/x", nil, "", azerr.InvalidURI),
		c("GET", a+"/qu1/other", nil, "", azerr.InvalidURI),
	}
	routeDispatch(t, cases)
}

// parseReq parses sr as queueDoor does.
func parseReq(sr *server.Request) *req { return newReq(sr, queuePaths.Split(sr)) }
