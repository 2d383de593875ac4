package server

import "net/http"

// Base returns r. Each service's parsed request type embeds *Request, so
// the method is promoted to it: a handler written once for every service
// (internal/svcpropsrest) reaches the common part of any
// service's request through it.
func (r *Request) Base() *Request { return r }

// HTTP is the request as net/http gave it (Typed reads its method: a
// HEAD's Content is not read).
func (r *Request) HTTP() *http.Request { return r.Request }
