package file

// The names the existing tests use for types exported for the domain
// methods' typed inputs and outputs (issue 28), so those tests stay as
// they were: the entry record (Entry), its SMB properties (SMBProps) and
// Copy File's parsed SMB headers (CopySMB).
type (
	entry    = Entry
	smbProps = SMBProps
	copySMB  = CopySMB
)
