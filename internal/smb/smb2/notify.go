package smb2

import (
	"errors"
)

// FILE_NOTIFY_INFORMATION actions (MS-FSCC 2.4.42).
const (
	FileActionAdded          uint32 = 1
	FileActionRemoved        uint32 = 2
	FileActionModified       uint32 = 3
	FileActionRenamedOldName uint32 = 4
	FileActionRenamedNewName uint32 = 5
)

// CHANGE_NOTIFY CompletionFilter bits (MS-SMB2 2.2.35).
const (
	FileNotifyChangeFileName   uint32 = 0x001
	FileNotifyChangeDirName    uint32 = 0x002
	FileNotifyChangeAttributes uint32 = 0x004
	FileNotifyChangeSize       uint32 = 0x008
	FileNotifyChangeLastWrite  uint32 = 0x010
	FileNotifyChangeLastAccess uint32 = 0x020
	FileNotifyChangeCreation   uint32 = 0x040
	FileNotifyChangeEA         uint32 = 0x080
	FileNotifyChangeSecurity   uint32 = 0x100
)

// FileNotifyInformation is one FILE_NOTIFY_INFORMATION record (MS-FSCC
// 2.4.42): FileName is relative to the watched directory.
type FileNotifyInformation struct {
	Action   uint32
	FileName string
}

// notifyRecordSize is the encoded size of a record, padded to 4 bytes.
func notifyRecordSize(name string) int {
	return (12 + len(utf16le(name)) + 3) &^ 3
}

// FileNotifyInformationSize is the size EncodeFileNotifyInformation gives
// recs.
func FileNotifyInformationSize(recs []FileNotifyInformation) int {
	n := 0
	for _, r := range recs {
		n += notifyRecordSize(r.FileName)
	}
	return n
}

// EncodeFileNotifyInformation encodes recs as a chain of
// FILE_NOTIFY_INFORMATION records, each at a 4-byte aligned offset (the
// last one padded too, as Windows does).
func EncodeFileNotifyInformation(recs []FileNotifyInformation) []byte {
	var b []byte
	for i, r := range recs {
		name := utf16le(r.FileName)
		size := (12 + len(name) + 3) &^ 3
		next := uint32(size)
		if i == len(recs)-1 {
			next = 0
		}
		b = le.AppendUint32(b, next)
		b = le.AppendUint32(b, r.Action)
		b = le.AppendUint32(b, uint32(len(name)))
		b = append(b, name...)
		for pad := size - 12 - len(name); pad > 0; pad-- {
			b = append(b, 0)
		}
	}
	return b
}

// DecodeFileNotifyInformation decodes a chain of FILE_NOTIFY_INFORMATION
// records.
func DecodeFileNotifyInformation(b []byte) ([]FileNotifyInformation, error) {
	var out []FileNotifyInformation
	for off := 0; ; {
		if len(b)-off < 12 {
			return nil, errors.New("smb2: FILE_NOTIFY_INFORMATION truncated")
		}
		next := int(le.Uint32(b[off:]))
		n := int(le.Uint32(b[off+8:]))
		if n > len(b)-off-12 {
			return nil, errors.New("smb2: FILE_NOTIFY_INFORMATION name overruns the buffer")
		}
		name, ok := decodeUTF16(b[off+12 : off+12+n])
		if !ok {
			return nil, errors.New("smb2: FILE_NOTIFY_INFORMATION name is not UTF-16")
		}
		out = append(out, FileNotifyInformation{Action: le.Uint32(b[off+4:]), FileName: name})
		if next == 0 {
			return out, nil
		}
		if next%4 != 0 || next < 12+n {
			return nil, errors.New("smb2: bad FILE_NOTIFY_INFORMATION NextEntryOffset")
		}
		off += next
	}
}
