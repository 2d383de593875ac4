package smb

import (
	"strings"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// newName checks the name an SMB client gives a new file or directory
// (the last component of a CREATE that may create, or a rename target)
// against what the File REST API can reach, so that nothing made over
// SMB is out of REST's reach. The File service (file.Opens) already
// applies the REST naming rules both front ends share (1 to 255
// characters, none of " \ / : | < > * ? or a control character, not "."
// or ".."; "Naming and referencing shares, directories, files, and
// metadata"); on top of them an SMB name may not be:
//
//   - made of dots alone ("...", "...."): REST trims a component's
//     trailing dots unless the client sends x-ms-allow-trailing-dot, so
//     for most clients such a name is empty, and the SDKs and proxies
//     that normalise dot segments of a URL path are a hazard for it
//     (inferred; "." and ".." are refused by the shared rules);
//   - holding a C1 control character (U+0080 to U+009F): the naming
//     page counts \u0081 among the control characters a name may not
//     contain;
//   - holding U+FFFE or U+FFFF, which XML 1.0 cannot carry (its Char
//     production), so a REST listing would show another name (encoding/xml
//     writes U+FFFD for them).
//
// Windows answers a name it cannot take with STATUS_OBJECT_NAME_INVALID
// (MS-FSA 2.1.5.1: an invalid FileName; MS-ERREF 2.3.1), and so does
// this. Existing items are not checked: a file made over REST with
// x-ms-allow-trailing-dot named "..." can still be opened and deleted
// over SMB.
func newName(name string) error {
	if strings.Trim(name, ".") == "" && name != "" {
		return smb2.StatusObjectNameInvalid
	}
	for _, r := range name {
		if (r >= 0x80 && r <= 0x9F) || r == 0xFFFE || r == 0xFFFF {
			return smb2.StatusObjectNameInvalid
		}
	}
	return nil
}

// mayCreate reports whether a CREATE with disposition d may create the
// item it names.
func mayCreate(d smb2.CreateDisposition) bool {
	return d != smb2.FileOpen && d != smb2.FileOverwrite
}
