// Package archtest holds tests of the tree's structure (no code): the
// packages below the HTTP line depend neither on net/http nor on the
// front door (internal/server), checked with `go list -deps`.
package archtest
