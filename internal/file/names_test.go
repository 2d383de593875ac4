package file

// The names the existing tests use for types exported for the domain
// methods' typed inputs and outputs (issue 28), so those tests stay as
// they were: the entry record (Entry) and its SMB properties (SMBProps).
type (
	entry    = Entry
	smbProps = SMBProps
)
