package smb2

import "strconv"

// InfoClass is a FileInformationClass or FsInformationClass (MS-FSCC 2.4,
// 2.5). The InfoType of the request tells the two numbering spaces apart.
type InfoClass uint8

// File information classes (MS-FSCC 2.4), for QUERY_INFO/SET_INFO with
// InfoTypeFile and for QUERY_DIRECTORY.
const (
	FileDirectoryInformationClass       InfoClass = 1
	FileFullDirectoryInformationClass   InfoClass = 2
	FileBothDirectoryInformationClass   InfoClass = 3
	FileBasicInformationClass           InfoClass = 4
	FileStandardInformationClass        InfoClass = 5
	FileInternalInformationClass        InfoClass = 6
	FileEaInformationClass              InfoClass = 7
	FileAccessInformationClass          InfoClass = 8
	FileNameInformationClass            InfoClass = 9
	FileRenameInformationClass          InfoClass = 10
	FileLinkInformationClass            InfoClass = 11
	FileNamesInformationClass           InfoClass = 12
	FileDispositionInformationClass     InfoClass = 13
	FilePositionInformationClass        InfoClass = 14
	FileFullEaInformationClass          InfoClass = 15
	FileModeInformationClass            InfoClass = 16
	FileAlignmentInformationClass       InfoClass = 17
	FileAllInformationClass             InfoClass = 18
	FileAllocationInformationClass      InfoClass = 19
	FileEndOfFileInformationClass       InfoClass = 20
	FileAlternateNameInformationClass   InfoClass = 21
	FileStreamInformationClass          InfoClass = 22
	FileCompressionInformationClass     InfoClass = 28
	FileNetworkOpenInformationClass     InfoClass = 34
	FileAttributeTagInformationClass    InfoClass = 35
	FileIdBothDirectoryInformationClass InfoClass = 37
	FileIdFullDirectoryInformationClass InfoClass = 38
	FileNormalizedNameInformationClass  InfoClass = 48
	FileDispositionInformationExClass   InfoClass = 64
)

// Filesystem information classes (MS-FSCC 2.5), for QUERY_INFO with
// InfoTypeFilesystem.
const (
	FileFsVolumeInformationClass     InfoClass = 1
	FileFsSizeInformationClass       InfoClass = 3
	FileFsDeviceInformationClass     InfoClass = 4
	FileFsAttributeInformationClass  InfoClass = 5
	FileFsControlInformationClass    InfoClass = 6
	FileFsFullSizeInformationClass   InfoClass = 7
	FileFsObjectIDInformationClass   InfoClass = 8
	FileFsSectorSizeInformationClass InfoClass = 11
)

// FileDispositionInformationEx flags (MS-FSCC 2.4.12).
const (
	DispositionDelete         uint32 = 0x00000001
	DispositionPosixSemantics uint32 = 0x00000002
	DispositionOnClose        uint32 = 0x00000008
	DispositionIgnoreReadonly uint32 = 0x00000010
)

// Filesystem attribute flags for FileFsAttributeInformation (MS-FSCC 2.5.1).
const (
	FSCaseSensitiveSearch  uint32 = 0x00000001
	FSCasePreservedNames   uint32 = 0x00000002
	FSUnicodeOnDisk        uint32 = 0x00000004
	FSPersistentACLs       uint32 = 0x00000008
	FSSupportsSparseFiles  uint32 = 0x00000040
	FSSupportsObjectIDs    uint32 = 0x00010000
	FSSupportsHardLinks    uint32 = 0x00400000
	FSSupportsExtendedAttr uint32 = 0x00800000
)

// FileDeviceDisk is FILE_DEVICE_DISK, the DeviceType of a disk share
// (MS-FSCC 2.5.10).
const FileDeviceDisk uint32 = 0x00000007

// Info is an information structure the server returns from QUERY_INFO.
type Info interface {
	// Encode returns the structure's bytes.
	Encode() []byte
	// FixedSize is the size of the part that must fit in the client's
	// buffer for a (possibly truncated) answer to be returned.
	FixedSize() int
}

// EncodeInfo encodes info for a QUERY_INFO response with the request's
// OutputBufferLength (MS-SMB2 3.3.5.20.1; MS-FSA 2.1.5.12): a buffer
// smaller than the fixed part is STATUS_INFO_LENGTH_MISMATCH and nothing
// is returned; a variable part that does not fit is cut to the buffer and
// STATUS_BUFFER_OVERFLOW returned with the truncated bytes (send them in a
// regular QUERY_INFO response with that status); otherwise
// STATUS_SUCCESS.
func EncodeInfo(info Info, outputBufferLength uint32) ([]byte, Status) {
	if uint64(outputBufferLength) < uint64(info.FixedSize()) {
		return nil, StatusInfoLengthMismatch
	}
	b := info.Encode()
	if uint64(len(b)) > uint64(outputBufferLength) {
		return b[:outputBufferLength], StatusBufferOverflow
	}
	return b, StatusSuccess
}

func infoMalformed(what, reason string) error {
	return malformedStruct(what, reason)
}

// needLen checks that an information buffer holds at least n bytes.
func needLen(b []byte, n int, what string) error {
	if len(b) < n {
		return infoMalformed(what, "shorter than "+strconv.Itoa(n)+" bytes")
	}
	return nil
}

func boolByte(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

// FileBasicInformation (class 4, MS-FSCC 2.4.7): query and set.
type FileBasicInformation struct {
	CreationTime   Filetime
	LastAccessTime Filetime
	LastWriteTime  Filetime
	ChangeTime     Filetime
	FileAttributes FileAttributes
}

// FixedSize is 40.
func (FileBasicInformation) FixedSize() int { return 40 }

// Encode returns the 40 bytes.
func (i FileBasicInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 40)}
	i.append(&e)
	return e.b
}

func (i FileBasicInformation) append(e *enc) {
	e.i64(int64(i.CreationTime))
	e.i64(int64(i.LastAccessTime))
	e.i64(int64(i.LastWriteTime))
	e.i64(int64(i.ChangeTime))
	e.u32(uint32(i.FileAttributes))
	e.u32(0)
}

// DecodeFileBasicInformation decodes a SET_INFO buffer. The trailing
// Reserved field is optional: 36 bytes are enough (as Samba accepts).
func DecodeFileBasicInformation(b []byte) (FileBasicInformation, error) {
	if err := needLen(b, 36, "FileBasicInformation"); err != nil {
		return FileBasicInformation{}, err
	}
	return FileBasicInformation{
		CreationTime:   Filetime(le.Uint64(b)),
		LastAccessTime: Filetime(le.Uint64(b[8:])),
		LastWriteTime:  Filetime(le.Uint64(b[16:])),
		ChangeTime:     Filetime(le.Uint64(b[24:])),
		FileAttributes: FileAttributes(le.Uint32(b[32:])),
	}, nil
}

// FileStandardInformation (class 5, MS-FSCC 2.4.41).
type FileStandardInformation struct {
	AllocationSize int64
	EndOfFile      int64
	NumberOfLinks  uint32
	DeletePending  bool
	Directory      bool
}

// FixedSize is 24.
func (FileStandardInformation) FixedSize() int { return 24 }

// Encode returns the 24 bytes.
func (i FileStandardInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 24)}
	i.append(&e)
	return e.b
}

func (i FileStandardInformation) append(e *enc) {
	e.i64(i.AllocationSize)
	e.i64(i.EndOfFile)
	e.u32(i.NumberOfLinks)
	e.u8(boolByte(i.DeletePending))
	e.u8(boolByte(i.Directory))
	e.u16(0)
}

// DecodeFileStandardInformation decodes the structure.
func DecodeFileStandardInformation(b []byte) (FileStandardInformation, error) {
	if err := needLen(b, 22, "FileStandardInformation"); err != nil {
		return FileStandardInformation{}, err
	}
	return FileStandardInformation{
		AllocationSize: int64(le.Uint64(b)),
		EndOfFile:      int64(le.Uint64(b[8:])),
		NumberOfLinks:  le.Uint32(b[16:]),
		DeletePending:  b[20] != 0,
		Directory:      b[21] != 0,
	}, nil
}

// FileInternalInformation (class 6, MS-FSCC 2.4.22): the file ID.
type FileInternalInformation struct {
	IndexNumber uint64
}

// FixedSize is 8.
func (FileInternalInformation) FixedSize() int { return 8 }

// Encode returns the 8 bytes.
func (i FileInternalInformation) Encode() []byte { return le.AppendUint64(nil, i.IndexNumber) }

// DecodeFileInternalInformation decodes the structure.
func DecodeFileInternalInformation(b []byte) (FileInternalInformation, error) {
	if err := needLen(b, 8, "FileInternalInformation"); err != nil {
		return FileInternalInformation{}, err
	}
	return FileInternalInformation{IndexNumber: le.Uint64(b)}, nil
}

// uint32Info is the shape of the 4-byte classes.
func decodeUint32Info(b []byte, what string) (uint32, error) {
	if err := needLen(b, 4, what); err != nil {
		return 0, err
	}
	return le.Uint32(b), nil
}

// FileEaInformation (class 7, MS-FSCC 2.4.13).
type FileEaInformation struct {
	EaSize uint32
}

// FixedSize is 4.
func (FileEaInformation) FixedSize() int { return 4 }

// Encode returns the 4 bytes.
func (i FileEaInformation) Encode() []byte { return le.AppendUint32(nil, i.EaSize) }

// DecodeFileEaInformation decodes the structure.
func DecodeFileEaInformation(b []byte) (FileEaInformation, error) {
	v, err := decodeUint32Info(b, "FileEaInformation")
	return FileEaInformation{EaSize: v}, err
}

// FileAccessInformation (class 8, MS-FSCC 2.4.1): the granted access.
type FileAccessInformation struct {
	AccessFlags AccessMask
}

// FixedSize is 4.
func (FileAccessInformation) FixedSize() int { return 4 }

// Encode returns the 4 bytes.
func (i FileAccessInformation) Encode() []byte { return le.AppendUint32(nil, uint32(i.AccessFlags)) }

// DecodeFileAccessInformation decodes the structure.
func DecodeFileAccessInformation(b []byte) (FileAccessInformation, error) {
	v, err := decodeUint32Info(b, "FileAccessInformation")
	return FileAccessInformation{AccessFlags: AccessMask(v)}, err
}

// FileNameInformation is FileNameLength(4) and FileName: the layout of
// FileNameInformation (9), FileAlternateNameInformation (21) and
// FileNormalizedNameInformation (48) (MS-FSCC 2.4.28, 2.4.5, 2.4.30).
type FileNameInformation struct {
	FileName string
}

// FixedSize is 4.
func (FileNameInformation) FixedSize() int { return 4 }

// Encode returns the bytes.
func (i FileNameInformation) Encode() []byte {
	e := enc{}
	i.append(&e)
	return e.b
}

func (i FileNameInformation) append(e *enc) {
	name := utf16le(i.FileName)
	e.u32(uint32(len(name)))
	e.bytes(name)
}

// DecodeFileNameInformation decodes the structure; the name must be valid
// UTF-16LE inside b.
func DecodeFileNameInformation(b []byte) (FileNameInformation, error) {
	const what = "FileNameInformation"
	if err := needLen(b, 4, what); err != nil {
		return FileNameInformation{}, err
	}
	n := uint64(le.Uint32(b))
	if 4+n > uint64(len(b)) {
		return FileNameInformation{}, infoMalformed(what, "name outside the buffer")
	}
	name, ok := decodeUTF16(b[4 : 4+n])
	if !ok {
		return FileNameInformation{}, infoMalformed(what, "name is not valid UTF-16")
	}
	return FileNameInformation{FileName: name}, nil
}

// FileRenameInformation (class 10) is FILE_RENAME_INFORMATION_TYPE_2
// (MS-FSCC 2.4.42.2); FileLinkInformation (class 11, MS-FSCC 2.4.27.2)
// has the same layout. FileName is the target path from the share root.
type FileRenameInformation struct {
	ReplaceIfExists bool
	RootDirectory   uint64
	FileName        string
}

// Encode returns the bytes.
func (i FileRenameInformation) Encode() []byte {
	name := utf16le(i.FileName)
	e := enc{b: make([]byte, 0, 20+len(name))}
	e.u8(boolByte(i.ReplaceIfExists))
	e.zero(7)
	e.u64(i.RootDirectory)
	e.u32(uint32(len(name)))
	e.bytes(name)
	return e.b
}

// DecodeFileRenameInformation decodes a SET_INFO buffer of class 10 or 11.
// It needs the 20-byte fixed part and a valid UTF-16LE name inside b.
func DecodeFileRenameInformation(b []byte) (FileRenameInformation, error) {
	const what = "FileRenameInformation"
	if err := needLen(b, 20, what); err != nil {
		return FileRenameInformation{}, err
	}
	n := uint64(le.Uint32(b[16:]))
	if 20+n > uint64(len(b)) {
		return FileRenameInformation{}, infoMalformed(what, "name outside the buffer")
	}
	name, ok := decodeUTF16(b[20 : 20+n])
	if !ok {
		return FileRenameInformation{}, infoMalformed(what, "name is not valid UTF-16")
	}
	return FileRenameInformation{ReplaceIfExists: b[0] != 0, RootDirectory: le.Uint64(b[8:]), FileName: name}, nil
}

// FileDispositionInformation (class 13, MS-FSCC 2.4.11): set only.
type FileDispositionInformation struct {
	DeletePending bool
}

// Encode returns the 1 byte.
func (i FileDispositionInformation) Encode() []byte { return []byte{boolByte(i.DeletePending)} }

// DecodeFileDispositionInformation decodes a SET_INFO buffer.
func DecodeFileDispositionInformation(b []byte) (FileDispositionInformation, error) {
	if err := needLen(b, 1, "FileDispositionInformation"); err != nil {
		return FileDispositionInformation{}, err
	}
	return FileDispositionInformation{DeletePending: b[0] != 0}, nil
}

// FileDispositionInformationEx (class 64, MS-FSCC 2.4.12): set only.
type FileDispositionInformationEx struct {
	Flags uint32 // Disposition*
}

// Encode returns the 4 bytes.
func (i FileDispositionInformationEx) Encode() []byte { return le.AppendUint32(nil, i.Flags) }

// DecodeFileDispositionInformationEx decodes a SET_INFO buffer.
func DecodeFileDispositionInformationEx(b []byte) (FileDispositionInformationEx, error) {
	v, err := decodeUint32Info(b, "FileDispositionInformationEx")
	return FileDispositionInformationEx{Flags: v}, err
}

// FilePositionInformation (class 14, MS-FSCC 2.4.35): query and set.
type FilePositionInformation struct {
	CurrentByteOffset int64
}

// FixedSize is 8.
func (FilePositionInformation) FixedSize() int { return 8 }

// Encode returns the 8 bytes.
func (i FilePositionInformation) Encode() []byte {
	return le.AppendUint64(nil, uint64(i.CurrentByteOffset))
}

// DecodeFilePositionInformation decodes the structure.
func DecodeFilePositionInformation(b []byte) (FilePositionInformation, error) {
	if err := needLen(b, 8, "FilePositionInformation"); err != nil {
		return FilePositionInformation{}, err
	}
	return FilePositionInformation{CurrentByteOffset: int64(le.Uint64(b))}, nil
}

// FileModeInformation (class 16, MS-FSCC 2.4.26): query and set.
type FileModeInformation struct {
	Mode uint32
}

// FixedSize is 4.
func (FileModeInformation) FixedSize() int { return 4 }

// Encode returns the 4 bytes.
func (i FileModeInformation) Encode() []byte { return le.AppendUint32(nil, i.Mode) }

// DecodeFileModeInformation decodes the structure.
func DecodeFileModeInformation(b []byte) (FileModeInformation, error) {
	v, err := decodeUint32Info(b, "FileModeInformation")
	return FileModeInformation{Mode: v}, err
}

// FileAlignmentInformation (class 17, MS-FSCC 2.4.3).
type FileAlignmentInformation struct {
	AlignmentRequirement uint32
}

// FixedSize is 4.
func (FileAlignmentInformation) FixedSize() int { return 4 }

// Encode returns the 4 bytes.
func (i FileAlignmentInformation) Encode() []byte {
	return le.AppendUint32(nil, i.AlignmentRequirement)
}

// DecodeFileAlignmentInformation decodes the structure.
func DecodeFileAlignmentInformation(b []byte) (FileAlignmentInformation, error) {
	v, err := decodeUint32Info(b, "FileAlignmentInformation")
	return FileAlignmentInformation{AlignmentRequirement: v}, err
}

// FileAllInformation (class 18, MS-FSCC 2.4.2): the classes 4, 5, 6, 7,
// 8, 14, 16 and 17 back to back, then FileNameInformation.
type FileAllInformation struct {
	Basic     FileBasicInformation
	Standard  FileStandardInformation
	Internal  FileInternalInformation
	Ea        FileEaInformation
	Access    FileAccessInformation
	Position  FilePositionInformation
	Mode      FileModeInformation
	Alignment FileAlignmentInformation
	Name      FileNameInformation
}

// FixedSize is 100: everything up to and including FileNameLength.
func (FileAllInformation) FixedSize() int { return 100 }

// Encode returns the bytes.
func (i FileAllInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 100+2*len(i.Name.FileName))}
	i.Basic.append(&e)
	i.Standard.append(&e)
	e.u64(i.Internal.IndexNumber)
	e.u32(i.Ea.EaSize)
	e.u32(uint32(i.Access.AccessFlags))
	e.i64(i.Position.CurrentByteOffset)
	e.u32(i.Mode.Mode)
	e.u32(i.Alignment.AlignmentRequirement)
	i.Name.append(&e)
	return e.b
}

// DecodeFileAllInformation decodes the structure.
func DecodeFileAllInformation(b []byte) (FileAllInformation, error) {
	if err := needLen(b, 100, "FileAllInformation"); err != nil {
		return FileAllInformation{}, err
	}
	var i FileAllInformation
	i.Basic, _ = DecodeFileBasicInformation(b[0:40])
	i.Standard, _ = DecodeFileStandardInformation(b[40:64])
	i.Internal.IndexNumber = le.Uint64(b[64:])
	i.Ea.EaSize = le.Uint32(b[72:])
	i.Access.AccessFlags = AccessMask(le.Uint32(b[76:]))
	i.Position.CurrentByteOffset = int64(le.Uint64(b[80:]))
	i.Mode.Mode = le.Uint32(b[88:])
	i.Alignment.AlignmentRequirement = le.Uint32(b[92:])
	var err error
	if i.Name, err = DecodeFileNameInformation(b[96:]); err != nil {
		return FileAllInformation{}, err
	}
	return i, nil
}

// FileAllocationInformation (class 19, MS-FSCC 2.4.4): set only.
type FileAllocationInformation struct {
	AllocationSize int64
}

// Encode returns the 8 bytes.
func (i FileAllocationInformation) Encode() []byte {
	return le.AppendUint64(nil, uint64(i.AllocationSize))
}

// DecodeFileAllocationInformation decodes a SET_INFO buffer.
func DecodeFileAllocationInformation(b []byte) (FileAllocationInformation, error) {
	if err := needLen(b, 8, "FileAllocationInformation"); err != nil {
		return FileAllocationInformation{}, err
	}
	return FileAllocationInformation{AllocationSize: int64(le.Uint64(b))}, nil
}

// FileEndOfFileInformation (class 20, MS-FSCC 2.4.14): set only.
type FileEndOfFileInformation struct {
	EndOfFile int64
}

// Encode returns the 8 bytes.
func (i FileEndOfFileInformation) Encode() []byte {
	return le.AppendUint64(nil, uint64(i.EndOfFile))
}

// DecodeFileEndOfFileInformation decodes a SET_INFO buffer.
func DecodeFileEndOfFileInformation(b []byte) (FileEndOfFileInformation, error) {
	if err := needLen(b, 8, "FileEndOfFileInformation"); err != nil {
		return FileEndOfFileInformation{}, err
	}
	return FileEndOfFileInformation{EndOfFile: int64(le.Uint64(b))}, nil
}

// StreamEntry is one FILE_STREAM_INFORMATION entry (MS-FSCC 2.4.43).
type StreamEntry struct {
	Name           string // "::$DATA" for the unnamed data stream
	Size           int64
	AllocationSize int64
}

// FileStreamInformation (class 22): a list of streams, empty for a
// directory.
type FileStreamInformation struct {
	Streams []StreamEntry
}

// FixedSize is 24, the fixed part of one entry; an empty list encodes to
// zero bytes and always fits.
func (i FileStreamInformation) FixedSize() int {
	if len(i.Streams) == 0 {
		return 0
	}
	return 24
}

// Encode returns the entries, each 8-byte aligned, linked by
// NextEntryOffset (0 on the last).
func (i FileStreamInformation) Encode() []byte {
	e := enc{}
	prev := -1
	for _, s := range i.Streams {
		if prev >= 0 {
			e.pad8()
			e.put32(prev, uint32(len(e.b)-prev))
		}
		prev = len(e.b)
		name := utf16le(s.Name)
		e.u32(0)
		e.u32(uint32(len(name)))
		e.i64(s.Size)
		e.i64(s.AllocationSize)
		e.bytes(name)
	}
	return e.b
}

// DecodeFileStreamInformation decodes the structure.
func DecodeFileStreamInformation(b []byte) (FileStreamInformation, error) {
	const what = "FileStreamInformation"
	var out FileStreamInformation
	for pos := 0; pos < len(b); {
		r := b[pos:]
		if len(r) < 24 {
			return FileStreamInformation{}, infoMalformed(what, "entry shorter than 24 bytes")
		}
		next := uint64(le.Uint32(r))
		extent := uint64(len(r))
		if next != 0 {
			if next%8 != 0 || next > extent {
				return FileStreamInformation{}, infoMalformed(what, "bad NextEntryOffset")
			}
			extent = next
		}
		n := uint64(le.Uint32(r[4:]))
		if 24+n > extent {
			return FileStreamInformation{}, infoMalformed(what, "name outside the entry")
		}
		name, ok := decodeUTF16(r[24 : 24+n])
		if !ok {
			return FileStreamInformation{}, infoMalformed(what, "name is not valid UTF-16")
		}
		out.Streams = append(out.Streams, StreamEntry{Name: name, Size: int64(le.Uint64(r[8:])), AllocationSize: int64(le.Uint64(r[16:]))})
		if next == 0 {
			break
		}
		pos += int(next)
	}
	return out, nil
}

// FileCompressionInformation (class 28, MS-FSCC 2.4.9).
type FileCompressionInformation struct {
	CompressedFileSize   int64
	CompressionFormat    uint16
	CompressionUnitShift uint8
	ChunkShift           uint8
	ClusterShift         uint8
}

// FixedSize is 16.
func (FileCompressionInformation) FixedSize() int { return 16 }

// Encode returns the 16 bytes.
func (i FileCompressionInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 16)}
	e.i64(i.CompressedFileSize)
	e.u16(i.CompressionFormat)
	e.u8(i.CompressionUnitShift)
	e.u8(i.ChunkShift)
	e.u8(i.ClusterShift)
	e.zero(3)
	return e.b
}

// DecodeFileCompressionInformation decodes the structure.
func DecodeFileCompressionInformation(b []byte) (FileCompressionInformation, error) {
	if err := needLen(b, 16, "FileCompressionInformation"); err != nil {
		return FileCompressionInformation{}, err
	}
	return FileCompressionInformation{
		CompressedFileSize:   int64(le.Uint64(b)),
		CompressionFormat:    le.Uint16(b[8:]),
		CompressionUnitShift: b[10],
		ChunkShift:           b[11],
		ClusterShift:         b[12],
	}, nil
}

// FileNetworkOpenInformation (class 34, MS-FSCC 2.4.29).
type FileNetworkOpenInformation struct {
	CreationTime   Filetime
	LastAccessTime Filetime
	LastWriteTime  Filetime
	ChangeTime     Filetime
	AllocationSize int64
	EndOfFile      int64
	FileAttributes FileAttributes
}

// FixedSize is 56.
func (FileNetworkOpenInformation) FixedSize() int { return 56 }

// Encode returns the 56 bytes.
func (i FileNetworkOpenInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 56)}
	e.netOpen(i)
	e.u32(0)
	return e.b
}

// netOpen appends the 52 bytes of times, sizes and attributes that
// FileNetworkOpenInformation shares with the CREATE and CLOSE responses.
func (e *enc) netOpen(i FileNetworkOpenInformation) {
	e.i64(int64(i.CreationTime))
	e.i64(int64(i.LastAccessTime))
	e.i64(int64(i.LastWriteTime))
	e.i64(int64(i.ChangeTime))
	e.i64(i.AllocationSize)
	e.i64(i.EndOfFile)
	e.u32(uint32(i.FileAttributes))
}

// decodeNetOpen reads the 52 bytes netOpen writes; b must hold them.
func decodeNetOpen(b []byte) FileNetworkOpenInformation {
	return FileNetworkOpenInformation{
		CreationTime:   Filetime(le.Uint64(b)),
		LastAccessTime: Filetime(le.Uint64(b[8:])),
		LastWriteTime:  Filetime(le.Uint64(b[16:])),
		ChangeTime:     Filetime(le.Uint64(b[24:])),
		AllocationSize: int64(le.Uint64(b[32:])),
		EndOfFile:      int64(le.Uint64(b[40:])),
		FileAttributes: FileAttributes(le.Uint32(b[48:])),
	}
}

// DecodeFileNetworkOpenInformation decodes the structure.
func DecodeFileNetworkOpenInformation(b []byte) (FileNetworkOpenInformation, error) {
	if err := needLen(b, 52, "FileNetworkOpenInformation"); err != nil {
		return FileNetworkOpenInformation{}, err
	}
	return decodeNetOpen(b), nil
}

// FileAttributeTagInformation (class 35, MS-FSCC 2.4.6).
type FileAttributeTagInformation struct {
	FileAttributes FileAttributes
	ReparseTag     uint32
}

// FixedSize is 8.
func (FileAttributeTagInformation) FixedSize() int { return 8 }

// Encode returns the 8 bytes.
func (i FileAttributeTagInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 8)}
	e.u32(uint32(i.FileAttributes))
	e.u32(i.ReparseTag)
	return e.b
}

// DecodeFileAttributeTagInformation decodes the structure.
func DecodeFileAttributeTagInformation(b []byte) (FileAttributeTagInformation, error) {
	if err := needLen(b, 8, "FileAttributeTagInformation"); err != nil {
		return FileAttributeTagInformation{}, err
	}
	return FileAttributeTagInformation{FileAttributes: FileAttributes(le.Uint32(b)), ReparseTag: le.Uint32(b[4:])}, nil
}

// FileFsVolumeInformation (FS class 1, MS-FSCC 2.5.9).
type FileFsVolumeInformation struct {
	VolumeCreationTime Filetime
	VolumeSerialNumber uint32
	SupportsObjects    bool
	VolumeLabel        string
}

// FixedSize is 24, not the 18 bytes before the label: Windows and smbd
// want the structure with a one-character label, rounded up to 8 bytes
// (sizeof(FILE_FS_VOLUME_INFORMATION)), before they answer at all
// (smb2.getinfo.qfs_buffercheck). A reply with a shorter label is
// still shorter than 24 bytes.
func (FileFsVolumeInformation) FixedSize() int { return 24 }

// Encode returns the bytes.
func (i FileFsVolumeInformation) Encode() []byte {
	label := utf16le(i.VolumeLabel)
	e := enc{b: make([]byte, 0, 18+len(label))}
	e.i64(int64(i.VolumeCreationTime))
	e.u32(i.VolumeSerialNumber)
	e.u32(uint32(len(label)))
	e.u8(boolByte(i.SupportsObjects))
	e.u8(0)
	e.bytes(label)
	return e.b
}

// DecodeFileFsVolumeInformation decodes the structure.
func DecodeFileFsVolumeInformation(b []byte) (FileFsVolumeInformation, error) {
	const what = "FileFsVolumeInformation"
	if err := needLen(b, 18, what); err != nil {
		return FileFsVolumeInformation{}, err
	}
	n := uint64(le.Uint32(b[12:]))
	if 18+n > uint64(len(b)) {
		return FileFsVolumeInformation{}, infoMalformed(what, "label outside the buffer")
	}
	label, ok := decodeUTF16(b[18 : 18+n])
	if !ok {
		return FileFsVolumeInformation{}, infoMalformed(what, "label is not valid UTF-16")
	}
	return FileFsVolumeInformation{
		VolumeCreationTime: Filetime(le.Uint64(b)),
		VolumeSerialNumber: le.Uint32(b[8:]),
		SupportsObjects:    b[16] != 0,
		VolumeLabel:        label,
	}, nil
}

// FileFsSizeInformation (FS class 3, MS-FSCC 2.5.8).
type FileFsSizeInformation struct {
	TotalAllocationUnits     int64
	AvailableAllocationUnits int64
	SectorsPerAllocationUnit uint32
	BytesPerSector           uint32
}

// FixedSize is 24.
func (FileFsSizeInformation) FixedSize() int { return 24 }

// Encode returns the 24 bytes.
func (i FileFsSizeInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 24)}
	e.i64(i.TotalAllocationUnits)
	e.i64(i.AvailableAllocationUnits)
	e.u32(i.SectorsPerAllocationUnit)
	e.u32(i.BytesPerSector)
	return e.b
}

// DecodeFileFsSizeInformation decodes the structure.
func DecodeFileFsSizeInformation(b []byte) (FileFsSizeInformation, error) {
	if err := needLen(b, 24, "FileFsSizeInformation"); err != nil {
		return FileFsSizeInformation{}, err
	}
	return FileFsSizeInformation{
		TotalAllocationUnits:     int64(le.Uint64(b)),
		AvailableAllocationUnits: int64(le.Uint64(b[8:])),
		SectorsPerAllocationUnit: le.Uint32(b[16:]),
		BytesPerSector:           le.Uint32(b[20:]),
	}, nil
}

// FileFsDeviceInformation (FS class 4, MS-FSCC 2.5.10).
type FileFsDeviceInformation struct {
	DeviceType      uint32 // FileDeviceDisk
	Characteristics uint32
}

// FixedSize is 8.
func (FileFsDeviceInformation) FixedSize() int { return 8 }

// Encode returns the 8 bytes.
func (i FileFsDeviceInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 8)}
	e.u32(i.DeviceType)
	e.u32(i.Characteristics)
	return e.b
}

// DecodeFileFsDeviceInformation decodes the structure.
func DecodeFileFsDeviceInformation(b []byte) (FileFsDeviceInformation, error) {
	if err := needLen(b, 8, "FileFsDeviceInformation"); err != nil {
		return FileFsDeviceInformation{}, err
	}
	return FileFsDeviceInformation{DeviceType: le.Uint32(b), Characteristics: le.Uint32(b[4:])}, nil
}

// FileFsAttributeInformation (FS class 5, MS-FSCC 2.5.1).
type FileFsAttributeInformation struct {
	FileSystemAttributes       uint32 // FS*
	MaximumComponentNameLength uint32
	FileSystemName             string // "NTFS"
}

// FixedSize is 16, not the 12 bytes before the name: as for
// FileFsVolumeInformation, sizeof(FILE_FS_ATTRIBUTE_INFORMATION) with a
// one-character name, rounded up to 8 bytes (smb2.getinfo.qfs_buffercheck).
func (FileFsAttributeInformation) FixedSize() int { return 16 }

// Encode returns the bytes.
func (i FileFsAttributeInformation) Encode() []byte {
	name := utf16le(i.FileSystemName)
	e := enc{b: make([]byte, 0, 12+len(name))}
	e.u32(i.FileSystemAttributes)
	e.u32(i.MaximumComponentNameLength)
	e.u32(uint32(len(name)))
	e.bytes(name)
	return e.b
}

// DecodeFileFsAttributeInformation decodes the structure.
func DecodeFileFsAttributeInformation(b []byte) (FileFsAttributeInformation, error) {
	const what = "FileFsAttributeInformation"
	if err := needLen(b, 12, what); err != nil {
		return FileFsAttributeInformation{}, err
	}
	n := uint64(le.Uint32(b[8:]))
	if 12+n > uint64(len(b)) {
		return FileFsAttributeInformation{}, infoMalformed(what, "name outside the buffer")
	}
	name, ok := decodeUTF16(b[12 : 12+n])
	if !ok {
		return FileFsAttributeInformation{}, infoMalformed(what, "name is not valid UTF-16")
	}
	return FileFsAttributeInformation{
		FileSystemAttributes:       le.Uint32(b),
		MaximumComponentNameLength: le.Uint32(b[4:]),
		FileSystemName:             name,
	}, nil
}

// FileFsControlInformation (FS class 6, MS-FSCC 2.5.2).
type FileFsControlInformation struct {
	FreeSpaceStartFiltering int64
	FreeSpaceThreshold      int64
	FreeSpaceStopFiltering  int64
	DefaultQuotaThreshold   uint64
	DefaultQuotaLimit       uint64
	FileSystemControlFlags  uint32
}

// FixedSize is 48.
func (FileFsControlInformation) FixedSize() int { return 48 }

// Encode returns the 48 bytes.
func (i FileFsControlInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 48)}
	e.i64(i.FreeSpaceStartFiltering)
	e.i64(i.FreeSpaceThreshold)
	e.i64(i.FreeSpaceStopFiltering)
	e.u64(i.DefaultQuotaThreshold)
	e.u64(i.DefaultQuotaLimit)
	e.u32(i.FileSystemControlFlags)
	e.u32(0)
	return e.b
}

// DecodeFileFsControlInformation decodes the structure.
func DecodeFileFsControlInformation(b []byte) (FileFsControlInformation, error) {
	if err := needLen(b, 44, "FileFsControlInformation"); err != nil {
		return FileFsControlInformation{}, err
	}
	return FileFsControlInformation{
		FreeSpaceStartFiltering: int64(le.Uint64(b)),
		FreeSpaceThreshold:      int64(le.Uint64(b[8:])),
		FreeSpaceStopFiltering:  int64(le.Uint64(b[16:])),
		DefaultQuotaThreshold:   le.Uint64(b[24:]),
		DefaultQuotaLimit:       le.Uint64(b[32:]),
		FileSystemControlFlags:  le.Uint32(b[40:]),
	}, nil
}

// FileFsFullSizeInformation (FS class 7, MS-FSCC 2.5.4).
type FileFsFullSizeInformation struct {
	TotalAllocationUnits           int64
	CallerAvailableAllocationUnits int64
	ActualAvailableAllocationUnits int64
	SectorsPerAllocationUnit       uint32
	BytesPerSector                 uint32
}

// FixedSize is 32.
func (FileFsFullSizeInformation) FixedSize() int { return 32 }

// Encode returns the 32 bytes.
func (i FileFsFullSizeInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 32)}
	e.i64(i.TotalAllocationUnits)
	e.i64(i.CallerAvailableAllocationUnits)
	e.i64(i.ActualAvailableAllocationUnits)
	e.u32(i.SectorsPerAllocationUnit)
	e.u32(i.BytesPerSector)
	return e.b
}

// DecodeFileFsFullSizeInformation decodes the structure.
func DecodeFileFsFullSizeInformation(b []byte) (FileFsFullSizeInformation, error) {
	if err := needLen(b, 32, "FileFsFullSizeInformation"); err != nil {
		return FileFsFullSizeInformation{}, err
	}
	return FileFsFullSizeInformation{
		TotalAllocationUnits:           int64(le.Uint64(b)),
		CallerAvailableAllocationUnits: int64(le.Uint64(b[8:])),
		ActualAvailableAllocationUnits: int64(le.Uint64(b[16:])),
		SectorsPerAllocationUnit:       le.Uint32(b[24:]),
		BytesPerSector:                 le.Uint32(b[28:]),
	}, nil
}

// FileFsObjectIDInformation (FS class 8, MS-FSCC 2.5.6).
type FileFsObjectIDInformation struct {
	ObjectID     [16]byte
	ExtendedInfo [48]byte
}

// FixedSize is 64.
func (FileFsObjectIDInformation) FixedSize() int { return 64 }

// Encode returns the 64 bytes.
func (i FileFsObjectIDInformation) Encode() []byte {
	b := make([]byte, 0, 64)
	b = append(b, i.ObjectID[:]...)
	return append(b, i.ExtendedInfo[:]...)
}

// DecodeFileFsObjectIDInformation decodes the structure.
func DecodeFileFsObjectIDInformation(b []byte) (FileFsObjectIDInformation, error) {
	if err := needLen(b, 64, "FileFsObjectIdInformation"); err != nil {
		return FileFsObjectIDInformation{}, err
	}
	var i FileFsObjectIDInformation
	copy(i.ObjectID[:], b[:16])
	copy(i.ExtendedInfo[:], b[16:64])
	return i, nil
}

// FileFsSectorSizeInformation (FS class 11, MS-FSCC 2.5.7).
type FileFsSectorSizeInformation struct {
	LogicalBytesPerSector                                 uint32
	PhysicalBytesPerSectorForAtomicity                    uint32
	PhysicalBytesPerSectorForPerformance                  uint32
	FileSystemEffectivePhysicalBytesPerSectorForAtomicity uint32
	Flags                                                 uint32
	ByteOffsetForSectorAlignment                          uint32
	ByteOffsetForPartitionAlignment                       uint32
}

// FixedSize is 28.
func (FileFsSectorSizeInformation) FixedSize() int { return 28 }

// Encode returns the 28 bytes.
func (i FileFsSectorSizeInformation) Encode() []byte {
	e := enc{b: make([]byte, 0, 28)}
	e.u32(i.LogicalBytesPerSector)
	e.u32(i.PhysicalBytesPerSectorForAtomicity)
	e.u32(i.PhysicalBytesPerSectorForPerformance)
	e.u32(i.FileSystemEffectivePhysicalBytesPerSectorForAtomicity)
	e.u32(i.Flags)
	e.u32(i.ByteOffsetForSectorAlignment)
	e.u32(i.ByteOffsetForPartitionAlignment)
	return e.b
}

// DecodeFileFsSectorSizeInformation decodes the structure.
func DecodeFileFsSectorSizeInformation(b []byte) (FileFsSectorSizeInformation, error) {
	if err := needLen(b, 28, "FileFsSectorSizeInformation"); err != nil {
		return FileFsSectorSizeInformation{}, err
	}
	return FileFsSectorSizeInformation{
		LogicalBytesPerSector:                                 le.Uint32(b),
		PhysicalBytesPerSectorForAtomicity:                    le.Uint32(b[4:]),
		PhysicalBytesPerSectorForPerformance:                  le.Uint32(b[8:]),
		FileSystemEffectivePhysicalBytesPerSectorForAtomicity: le.Uint32(b[12:]),
		Flags:                           le.Uint32(b[16:]),
		ByteOffsetForSectorAlignment:    le.Uint32(b[20:]),
		ByteOffsetForPartitionAlignment: le.Uint32(b[24:]),
	}, nil
}
