package file

// The names the existing tests use for types exported for the domain
// methods' typed inputs and outputs, so those tests stay as
// they were: the entry record (Entry) and its SMB properties (SMBProps).
type (
	entry    = Entry
	smbProps = SMBProps
)

// The names the tests use for the refusal kinds, exported for the doors
// to map.
type check = Check

const (
	byAccess        = ByAccess
	byShareMode     = ByShareMode
	byDeletePending = ByDeletePending
	byLock          = ByLock
	byLease         = ByLease
	byReadOnly      = ByReadOnly
	byQuota         = ByQuota
)

func refusedBy(err error) Check { return RefusedBy(err) }
