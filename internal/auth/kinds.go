// The vocabulary every check shares: the four services, the
// Authorization schemes and the orders of canonicalized headers.

package auth

// Service is one of the four storage services. The Blob, Queue and File
// services share one signing scheme; Table has its own.
type Service int

// The services.
const (
	Blob Service = iota
	Queue
	Table
	File
)

// String returns the service name.
func (s Service) String() string {
	switch s {
	case Blob:
		return "blob"
	case Queue:
		return "queue"
	case Table:
		return "table"
	case File:
		return "file"
	}
	return "unknown"
}

// Scheme is the Authorization scheme.
type Scheme int

// The Authorization header schemes this package verifies.
const (
	SharedKey Scheme = iota + 1
	SharedKeyLite
)

// String returns the scheme as written in the Authorization header.
func (s Scheme) String() string {
	switch s {
	case SharedKey:
		return "SharedKey"
	case SharedKeyLite:
		return "SharedKeyLite"
	}
	return "unknown"
}

// HeaderOrder selects how the canonicalized x-ms-* headers are sorted.
type HeaderOrder int

const (
	// CultureOrder is the weighted comparator used by azblob and azfile
	// (see CompareHeaderNames): '-' and '\'' carry no primary weight.
	CultureOrder HeaderOrder = iota
	// OrdinalOrder is plain byte order (azqueue, sort.Strings).
	OrdinalOrder
)
