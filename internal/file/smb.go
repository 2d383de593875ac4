package file

import (
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// Attributes are NTFS file attributes (MS-FSCC 2.6), the subset Azure Files
// accepts in x-ms-file-attributes (Set File Properties,
// https://learn.microsoft.com/en-us/rest/api/storageservices/set-file-properties,
// "File system attributes").
type Attributes uint32

// Attribute bits, with their MS-FSCC values so the SMB front end can use
// them unchanged.
const (
	AttrReadOnly          Attributes = 0x1
	AttrHidden            Attributes = 0x2
	AttrSystem            Attributes = 0x4
	AttrDirectory         Attributes = 0x10
	AttrArchive           Attributes = 0x20
	AttrNormal            Attributes = 0x80 // "None": no other attribute
	AttrTemporary         Attributes = 0x100
	AttrOffline           Attributes = 0x1000
	AttrNotContentIndexed Attributes = 0x2000
	AttrNoScrubData       Attributes = 0x20000
)

var attrNames = []struct {
	bit  Attributes
	name string
}{
	{AttrReadOnly, "ReadOnly"},
	{AttrHidden, "Hidden"},
	{AttrSystem, "System"},
	{AttrDirectory, "Directory"},
	{AttrArchive, "Archive"},
	{AttrTemporary, "Temporary"},
	{AttrOffline, "Offline"},
	{AttrNotContentIndexed, "NotContentIndexed"},
	{AttrNoScrubData, "NoScrubData"},
}

// ParseAttributes parses "ReadOnly|Archive" (case-insensitive, spaces
// around separators allowed; "None" alone means no attribute). ok is false
// for an unknown name, an empty element, or "None" combined with others.
func ParseAttributes(s string) (a Attributes, ok bool) {
	none := false
	n := 0
	for _, f := range strings.Split(s, "|") {
		f = strings.TrimSpace(f)
		n++
		if strings.EqualFold(f, "None") {
			none = true
			continue
		}
		found := false
		for _, an := range attrNames {
			if strings.EqualFold(f, an.name) {
				a |= an.bit
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	if none && n > 1 {
		return 0, false
	}
	return a, true
}

// String formats attributes as the service does: names joined by " | ",
// "None" when there are none.
func (a Attributes) String() string {
	var parts []string
	for _, an := range attrNames {
		if a&an.bit != 0 {
			parts = append(parts, an.name)
		}
	}
	if len(parts) == 0 {
		return "None"
	}
	return strings.Join(parts, " | ")
}

// timeLayout is the x-ms-file-*-time format: ISO 8601 with seven
// fractional digits.
const timeLayout = "2006-01-02T15:04:05.0000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// fileTime is an x-ms-file-*-time header of a create or set-properties
// request, read before the transaction: "now", "preserve" or a time.
type fileTime struct {
	name, raw string // the header and its value (for the error)
	preserve  bool
	now       bool
	at        time.Time
	bad       bool // raw is not a time
}

// readFileTime reads header name of h; def is the value used when the
// header is absent. A malformed value is not an error yet: resolve
// reports it, inside the transaction, where the request's earlier checks
// (lease, handles) have passed, as before the domain took typed inputs.
func readFileTime(h http.Header, name, def string) fileTime {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		v = def
	}
	ft := fileTime{name: name, raw: v}
	switch strings.ToLower(v) {
	case "now":
		ft.now = true
	case "preserve":
		ft.preserve = true
	default:
		t, err := time.Parse(time.RFC3339Nano, v)
		ft.at, ft.bad = t.UTC(), err != nil
	}
	return ft
}

// resolve is the time ft sets at now on an item whose time is old:
// "preserve" of no time (a create) and a malformed value are 400
// InvalidHeaderValue.
func (ft *fileTime) resolve(now, old time.Time) (time.Time, error) {
	switch {
	case ft.bad, ft.preserve && old.IsZero():
		return time.Time{}, azerr.InvalidHeader(ft.name, ft.raw)
	case ft.now:
		return now, nil
	case ft.preserve:
		return old, nil
	}
	return ft.at, nil
}

// maxPermHeader is the largest SDDL accepted in x-ms-file-permission; larger
// permissions go through Create Permission (Create File,
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-file,
// x-ms-file-permission).
const maxPermHeader = 8 << 10

// defaultSDDL is the permission of a share's root directory and of items
// created with "inherit" under it: owner and group Administrators,
// full control for Administrators, SYSTEM and Authenticated Users.
const defaultSDDL = "O:BAG:SYD:(A;OICI;FA;;;BA)(A;OICI;FA;;;SY)(A;OICI;0x1301bf;;;AU)"

// validSDDL checks the shape of a security descriptor string: printable
// ASCII starting with an owner, group, DACL or SACL component.
func validSDDL(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	switch s[:2] {
	case "O:", "G:", "D:", "S:":
		return true
	}
	return false
}

// permissionKey derives a permission's key from its text, so one SDDL is
// stored once per share. The form mimics the service's
// "<decimal>*<decimal>".
func permissionKey(sddl string) string {
	sum := sha256.Sum256([]byte(sddl))
	return strconv.FormatUint(binary.BigEndian.Uint64(sum[:8]), 10) + "*" + strconv.FormatUint(binary.BigEndian.Uint64(sum[8:16]), 10)
}

// storePermission records sddl in the share's permission table and returns
// its key.
func storePermission(tx kv.Tx, acct, sh, sddl string) (string, error) {
	key := permissionKey(sddl)
	if err := tx.Put(permKey(acct, sh, key), []byte(sddl)); err != nil {
		return "", err
	}
	return key, nil
}

// loadPermission returns the SDDL stored under key, or "" if none.
func loadPermission(tx kv.Tx, acct, sh, key string) (string, error) {
	v, err := tx.Get(permKey(acct, sh, key))
	if err == kv.ErrNotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return string(v), nil
}

// SMBRequest holds the SMB property headers of a create or set-properties
// request, parsed before the transaction: the typed SMB properties a
// domain call takes.
type SMBRequest struct {
	// created, lastWrite and changed are x-ms-file-creation-time,
	// x-ms-file-last-write-time and x-ms-file-change-time.
	created, lastWrite, changed fileTime
	attrs                       *Attributes // nil: default (create) or preserve (set)
	perm                        string      // SDDL from x-ms-file-permission; "" none
	permKey                     string      // x-ms-file-permission-key
	inherit                     bool        // x-ms-file-permission: inherit
	create                      bool
}

// parseSMB reads the SMB property headers. create selects the defaults of
// Create File/Directory ("now", "inherit") over those of Set Properties
// ("preserve").
func parseSMB(h http.Header, create bool) (*SMBRequest, error) {
	timeDef := "preserve"
	if create {
		timeDef = "now"
	}
	sr := &SMBRequest{create: create,
		created:   readFileTime(h, "x-ms-file-creation-time", timeDef),
		lastWrite: readFileTime(h, "x-ms-file-last-write-time", timeDef),
		changed:   readFileTime(h, "x-ms-file-change-time", "now"),
	}
	if v := strings.TrimSpace(h.Get("x-ms-file-attributes")); v != "" && !strings.EqualFold(v, "preserve") {
		a, ok := ParseAttributes(v)
		if !ok {
			return nil, azerr.InvalidHeader("x-ms-file-attributes", v)
		}
		sr.attrs = &a
	}
	perm := h.Get("x-ms-file-permission")
	key := h.Get("x-ms-file-permission-key")
	switch {
	case perm != "" && key != "":
		return nil, azerr.Newf(azerr.InvalidHeaderValue, "Only one of x-ms-file-permission and x-ms-file-permission-key may be specified.").With("HeaderName", "x-ms-file-permission")
	case strings.EqualFold(perm, "inherit"):
		sr.inherit = true
	case strings.EqualFold(perm, "preserve"):
		if create {
			return nil, azerr.InvalidHeader("x-ms-file-permission", perm)
		}
	case perm != "":
		if len(perm) > maxPermHeader {
			return nil, azerr.Newf(azerr.InvalidHeaderValue, "The permission is larger than 8 KiB; use Create Permission and x-ms-file-permission-key.").With("HeaderName", "x-ms-file-permission")
		}
		if !validSDDL(perm) {
			return nil, azerr.New(azerr.FileInvalidPermission)
		}
		sr.perm = perm
	case key != "":
		sr.permKey = key
	default:
		sr.inherit = create
	}
	if f := h.Get("x-ms-file-permission-format"); f != "" && !strings.EqualFold(f, "sddl") {
		return nil, azerr.InvalidHeader("x-ms-file-permission-format", f)
	}
	return sr, nil
}

// apply sets e's SMB properties from the request inside tx at now.
// parentKey is the permission key of the parent directory ("inherit").
func (sr *SMBRequest) apply(tx kv.Tx, acct, sh string, e *Entry, parentKey string, now time.Time) error {
	var err error
	if e.SMB.Created, err = sr.created.resolve(now, e.SMB.Created); err != nil {
		return err
	}
	if e.SMB.LastWrite, err = sr.lastWrite.resolve(now, e.SMB.LastWrite); err != nil {
		return err
	}
	if e.SMB.Changed, err = sr.changed.resolve(now, e.SMB.Changed); err != nil {
		return err
	}
	switch {
	case sr.attrs != nil:
		e.SMB.Attrs = *sr.attrs
	case sr.create && !e.Dir:
		e.SMB.Attrs = AttrArchive
	}
	if e.Dir {
		e.SMB.Attrs |= AttrDirectory
	} else {
		e.SMB.Attrs &^= AttrDirectory
	}
	switch {
	case sr.perm != "":
		if e.SMB.PermKey, err = storePermission(tx, acct, sh, sr.perm); err != nil {
			return err
		}
	case sr.permKey != "":
		sddl, err := loadPermission(tx, acct, sh, sr.permKey)
		if err != nil {
			return err
		}
		if sddl == "" {
			return azerr.New(azerr.FileInvalidPermissionKey)
		}
		e.SMB.PermKey = sr.permKey
	case sr.inherit:
		e.SMB.PermKey = parentKey
	}
	return nil
}

// setSMBHeaders writes the SMB properties and IDs of e.
func setSMBHeaders(w http.ResponseWriter, e *Entry) {
	h := w.Header()
	h.Set("x-ms-file-attributes", e.SMB.Attrs.String())
	h.Set("x-ms-file-creation-time", formatTime(e.SMB.Created))
	h.Set("x-ms-file-last-write-time", formatTime(e.SMB.LastWrite))
	h.Set("x-ms-file-change-time", formatTime(e.SMB.Changed))
	h.Set("x-ms-file-permission-key", e.SMB.PermKey)
	h.Set("x-ms-file-id", FormatID(e.ID))
	h.Set("x-ms-file-parent-id", FormatID(e.Parent))
}

// writeEntryWritten answers a write that changed e's SMB properties
// (create, set properties): ETag, Last-Modified, the SMB headers and the
// encryption flag, with status.
func writeEntryWritten(w http.ResponseWriter, e *Entry, status int) {
	setETag(w, e)
	setSMBHeaders(w, e)
	w.Header().Set("x-ms-request-server-encrypted", "true")
	w.WriteHeader(status)
}

// parseCreate reads the metadata and SMB property headers of Create File
// and Create Directory.
func parseCreate(h http.Header) (map[string]string, *SMBRequest, error) {
	meta, err := wire.ParseMetadata(h)
	if err != nil {
		return nil, nil, err
	}
	smb, err := parseSMB(h, true)
	if err != nil {
		return nil, nil, err
	}
	return meta, smb, nil
}

// writeEntryProps sets the headers every properties read of e carries:
// ETag, Last-Modified, the SMB properties and the metadata.
func writeEntryProps(w http.ResponseWriter, e *Entry) {
	setETag(w, e)
	setSMBHeaders(w, e)
	wire.WriteMetadata(w.Header(), e.Meta)
}
