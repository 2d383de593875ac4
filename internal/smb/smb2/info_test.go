package smb2

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

// infoCodec pairs an information structure decoder with Encode.
type infoCodec struct {
	name    string
	decode  func([]byte) (encoder, error)
	size    int // encoded size of the fixed part, -1 when it varies
	samples []encoder
}

func mkInfo[T encoder](name string, size int, decode func([]byte) (T, error), samples ...T) infoCodec {
	c := infoCodec{name: name, size: size, decode: func(b []byte) (encoder, error) { return decode(b) }}
	for _, s := range samples {
		c.samples = append(c.samples, s)
	}
	return c
}

var basic = FileBasicInformation{CreationTime: 1, LastAccessTime: 2, LastWriteTime: 3, ChangeTime: 4, FileAttributes: AttrArchive | AttrReadonly}

var infoCodecs = []infoCodec{
	mkInfo("FileBasicInformation", 40, DecodeFileBasicInformation, basic, FileBasicInformation{CreationTime: FiletimeStopUpdates, LastWriteTime: FiletimeResumeUpdate}),
	mkInfo("FileStandardInformation", 24, DecodeFileStandardInformation, FileStandardInformation{AllocationSize: 4096, EndOfFile: 10, NumberOfLinks: 1, DeletePending: true, Directory: true}),
	mkInfo("FileInternalInformation", 8, DecodeFileInternalInformation, FileInternalInformation{IndexNumber: 0xDEADBEEF}),
	mkInfo("FileEaInformation", 4, DecodeFileEaInformation, FileEaInformation{EaSize: 3}),
	mkInfo("FileAccessInformation", 4, DecodeFileAccessInformation, FileAccessInformation{AccessFlags: FileGenericRead}),
	mkInfo("FileNameInformation", -1, DecodeFileNameInformation, FileNameInformation{FileName: `\dir\file.txt`}, FileNameInformation{}),
	mkInfo("FileRenameInformation", -1, DecodeFileRenameInformation, FileRenameInformation{ReplaceIfExists: true, FileName: `new\name`}, FileRenameInformation{RootDirectory: 7}),
	mkInfo("FileDispositionInformation", 1, DecodeFileDispositionInformation, FileDispositionInformation{DeletePending: true}, FileDispositionInformation{}),
	mkInfo("FileDispositionInformationEx", 4, DecodeFileDispositionInformationEx, FileDispositionInformationEx{Flags: DispositionDelete | DispositionPosixSemantics}),
	mkInfo("FilePositionInformation", 8, DecodeFilePositionInformation, FilePositionInformation{CurrentByteOffset: 1 << 33}),
	mkInfo("FileModeInformation", 4, DecodeFileModeInformation, FileModeInformation{Mode: 0x20}),
	mkInfo("FileAlignmentInformation", 4, DecodeFileAlignmentInformation, FileAlignmentInformation{AlignmentRequirement: 1}),
	mkInfo("FileAllInformation", -1, DecodeFileAllInformation, FileAllInformation{
		Basic: basic, Standard: FileStandardInformation{EndOfFile: 5, NumberOfLinks: 1}, Internal: FileInternalInformation{IndexNumber: 9},
		Ea: FileEaInformation{EaSize: 1}, Access: FileAccessInformation{AccessFlags: FileAllAccess}, Position: FilePositionInformation{CurrentByteOffset: 2},
		Mode: FileModeInformation{Mode: 4}, Alignment: FileAlignmentInformation{AlignmentRequirement: 3}, Name: FileNameInformation{FileName: `\a\b`},
	}),
	mkInfo("FileAllocationInformation", 8, DecodeFileAllocationInformation, FileAllocationInformation{AllocationSize: 1 << 20}),
	mkInfo("FileEndOfFileInformation", 8, DecodeFileEndOfFileInformation, FileEndOfFileInformation{EndOfFile: 12345}),
	mkInfo("FileStreamInformation", -1, DecodeFileStreamInformation,
		FileStreamInformation{Streams: []StreamEntry{{Name: "::$DATA", Size: 10, AllocationSize: 4096}}},
		FileStreamInformation{Streams: []StreamEntry{{Name: "::$DATA"}, {Name: ":s:$DATA", Size: 1}, {Name: ":longer stream name:$DATA", Size: 2}}},
		FileStreamInformation{}),
	mkInfo("FileCompressionInformation", 16, DecodeFileCompressionInformation, FileCompressionInformation{CompressedFileSize: 10, CompressionFormat: 2, CompressionUnitShift: 16, ChunkShift: 12, ClusterShift: 9}),
	mkInfo("FileNetworkOpenInformation", 56, DecodeFileNetworkOpenInformation, FileNetworkOpenInformation{CreationTime: 1, LastAccessTime: 2, LastWriteTime: 3, ChangeTime: 4, AllocationSize: 5, EndOfFile: 6, FileAttributes: AttrDirectory}),
	mkInfo("FileAttributeTagInformation", 8, DecodeFileAttributeTagInformation, FileAttributeTagInformation{FileAttributes: AttrNormal, ReparseTag: 0xA000000C}),
	mkInfo("FileFsVolumeInformation", -1, DecodeFileFsVolumeInformation, FileFsVolumeInformation{VolumeCreationTime: 9, VolumeSerialNumber: 0xCAFE, SupportsObjects: true, VolumeLabel: "share"}, FileFsVolumeInformation{}),
	mkInfo("FileFsSizeInformation", 24, DecodeFileFsSizeInformation, FileFsSizeInformation{TotalAllocationUnits: 1 << 30, AvailableAllocationUnits: 1 << 29, SectorsPerAllocationUnit: 8, BytesPerSector: 512}),
	mkInfo("FileFsDeviceInformation", 8, DecodeFileFsDeviceInformation, FileFsDeviceInformation{DeviceType: FileDeviceDisk, Characteristics: 0x20}),
	mkInfo("FileFsAttributeInformation", -1, DecodeFileFsAttributeInformation, FileFsAttributeInformation{FileSystemAttributes: FSCasePreservedNames | FSUnicodeOnDisk, MaximumComponentNameLength: 255, FileSystemName: "NTFS"}),
	mkInfo("FileFsControlInformation", 48, DecodeFileFsControlInformation, FileFsControlInformation{FreeSpaceStartFiltering: 1, FreeSpaceThreshold: 2, FreeSpaceStopFiltering: 3, DefaultQuotaThreshold: math.MaxUint64, DefaultQuotaLimit: 5, FileSystemControlFlags: 6}),
	mkInfo("FileFsFullSizeInformation", 32, DecodeFileFsFullSizeInformation, FileFsFullSizeInformation{TotalAllocationUnits: 100, CallerAvailableAllocationUnits: 50, ActualAvailableAllocationUnits: 60, SectorsPerAllocationUnit: 1, BytesPerSector: 4096}),
	mkInfo("FileFsObjectIDInformation", 64, DecodeFileFsObjectIDInformation, FileFsObjectIDInformation{ObjectID: [16]byte{1, 2}, ExtendedInfo: [48]byte{3}}),
	mkInfo("FileFsSectorSizeInformation", 28, DecodeFileFsSectorSizeInformation, FileFsSectorSizeInformation{LogicalBytesPerSector: 512, PhysicalBytesPerSectorForAtomicity: 4096, PhysicalBytesPerSectorForPerformance: 4096, FileSystemEffectivePhysicalBytesPerSectorForAtomicity: 4096, Flags: 3, ByteOffsetForSectorAlignment: 0, ByteOffsetForPartitionAlignment: 0}),
}

func TestInfoRoundTrip(t *testing.T) {
	for _, c := range infoCodecs {
		for i, s := range c.samples {
			b := s.Encode()
			if c.size >= 0 && len(b) != c.size {
				t.Errorf("%s[%d]: %d bytes, want %d", c.name, i, len(b), c.size)
			}
			if info, ok := s.(Info); ok {
				fixed := info.FixedSize()
				// The FS classes with a name have a FixedSize of the
				// structure's C size, more than an encoding with a
				// short (or empty) name.
				padded := c.name == "FileFsVolumeInformation" || c.name == "FileFsAttributeInformation"
				if fixed > len(b) && !padded || (c.size >= 0 && fixed != c.size) {
					t.Errorf("%s[%d]: FixedSize %d for %d bytes", c.name, i, fixed, len(b))
				}
				if _, st := EncodeInfo(info, uint32(fixed)); fixed > 0 && st == StatusInfoLengthMismatch {
					t.Errorf("%s[%d]: the fixed part alone does not fit", c.name, i)
				}
				if _, st := EncodeInfo(info, uint32(fixed-1)); fixed > 0 && st != StatusInfoLengthMismatch {
					t.Errorf("%s[%d]: %d bytes give %v", c.name, i, fixed-1, st)
				}
			}
			got, err := c.decode(b)
			if err != nil || !reflect.DeepEqual(got, s) {
				t.Fatalf("%s[%d]: %+v %v\nwant %+v", c.name, i, got, err, s)
			}
			if len(b) > 0 {
				if _, err := c.decode(b[:len(b)-1]); err == nil && c.size >= 0 && c.name != "FileBasicInformation" &&
					c.name != "FileStandardInformation" && c.name != "FileNetworkOpenInformation" && c.name != "FileFsControlInformation" {
					t.Errorf("%s[%d]: accepted one byte short", c.name, i)
				}
			}
		}
	}
}

// TestInfoLayouts pins the offsets of the structures smbclient relies on.
func TestInfoLayouts(t *testing.T) {
	all := infoCodecs[12].samples[0].(FileAllInformation)
	b := all.Encode()
	if len(b) != 100+8 || le.Uint32(b[32:]) != uint32(basic.FileAttributes) || le.Uint64(b[48:]) != 5 ||
		le.Uint64(b[64:]) != 9 || le.Uint32(b[76:]) != uint32(FileAllAccess) || le.Uint32(b[96:]) != 8 || string(b[100:]) != "\\\x00a\x00\\\x00b\x00" {
		t.Fatalf("FileAllInformation %x", b)
	}
	std := FileStandardInformation{DeletePending: true}.Encode()
	if std[20] != 1 || std[21] != 0 {
		t.Fatalf("DeletePending/Directory bytes %x", std[20:])
	}
	ren := FileRenameInformation{ReplaceIfExists: true, FileName: "x"}.Encode()
	if !bytes.Equal(ren, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'x', 0}) {
		t.Fatalf("FileRenameInformation %x", ren)
	}
	vol := FileFsVolumeInformation{VolumeLabel: "ab"}.Encode()
	if len(vol) != 22 || le.Uint32(vol[12:]) != 4 || string(vol[18:]) != "a\x00b\x00" {
		t.Fatalf("FileFsVolumeInformation %x", vol)
	}
	attr := FileFsAttributeInformation{FileSystemName: "NTFS", MaximumComponentNameLength: 255}.Encode()
	if le.Uint32(attr[4:]) != 255 || le.Uint32(attr[8:]) != 8 || len(attr) != 20 {
		t.Fatalf("FileFsAttributeInformation %x", attr)
	}
	streams := FileStreamInformation{Streams: []StreamEntry{{Name: "::$DATA", Size: 1}, {Name: "b"}}}.Encode()
	// 24 + 14 = 38 → next entry at 40; last entry 24 + 2.
	if le.Uint32(streams) != 40 || le.Uint32(streams[4:]) != 14 || le.Uint32(streams[40:]) != 0 || len(streams) != 66 {
		t.Fatalf("FileStreamInformation %x", streams)
	}
	// SET_INFO FileBasicInformation: 36 bytes are enough.
	if got, err := DecodeFileBasicInformation(basic.Encode()[:36]); err != nil || got != basic {
		t.Fatalf("36-byte basic info: %+v %v", got, err)
	}
	if _, err := DecodeFileBasicInformation(make([]byte, 35)); !errors.Is(err, StatusInvalidParameter) {
		t.Fatalf("35-byte basic info: %v", err)
	}
	for name, b := range map[string][]byte{
		"rename name past end":  append(FileRenameInformation{FileName: "ab"}.Encode()[:20], 'a', 0),
		"rename odd name":       func() []byte { b := FileRenameInformation{FileName: "ab"}.Encode(); le.PutUint32(b[16:], 3); return b }(),
		"name info past end":    {8, 0, 0, 0, 'a', 0},
		"volume label past end": func() []byte { b := FileFsVolumeInformation{VolumeLabel: "ab"}.Encode(); return b[:21] }(),
		"stream misaligned":     func() []byte { b := bytes.Clone(streams); le.PutUint32(b, 36); return b }(),
		"stream name past next": func() []byte { b := bytes.Clone(streams); le.PutUint32(b[4:], 18); return b }(),
		"fs attribute name":     func() []byte { b := bytes.Clone(attr); le.PutUint32(b[8:], 10); return b }(),
		"all information name":  func() []byte { b := all.Encode(); le.PutUint32(b[96:], 10); return b }(),
	} {
		var err error
		switch {
		case name[:6] == "rename":
			_, err = DecodeFileRenameInformation(b)
		case name[:4] == "name":
			_, err = DecodeFileNameInformation(b)
		case name[:6] == "volume":
			_, err = DecodeFileFsVolumeInformation(b)
		case name[:6] == "stream":
			_, err = DecodeFileStreamInformation(b)
		case name[:2] == "fs":
			_, err = DecodeFileFsAttributeInformation(b)
		default:
			_, err = DecodeFileAllInformation(b)
		}
		if !errors.Is(err, StatusInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestEncodeInfo(t *testing.T) {
	all := infoCodecs[12].samples[0].(FileAllInformation)
	full := all.Encode()
	if b, st := EncodeInfo(all, 4096); st != StatusSuccess || !bytes.Equal(b, full) {
		t.Fatalf("roomy buffer: %v", st)
	}
	if b, st := EncodeInfo(all, uint32(len(full))); st != StatusSuccess || len(b) != len(full) {
		t.Fatalf("exact buffer: %v", st)
	}
	if b, st := EncodeInfo(all, 104); st != StatusBufferOverflow || !bytes.Equal(b, full[:104]) {
		t.Fatalf("truncated name: %v %d", st, len(b))
	}
	if b, st := EncodeInfo(all, 100); st != StatusBufferOverflow || len(b) != 100 {
		t.Fatalf("fixed part only: %v %d", st, len(b))
	}
	if b, st := EncodeInfo(all, 99); st != StatusInfoLengthMismatch || b != nil {
		t.Fatalf("below fixed part: %v", st)
	}
	if _, st := EncodeInfo(FileFsSizeInformation{}, 23); st != StatusInfoLengthMismatch {
		t.Fatalf("fs size in 23 bytes: %v", st)
	}
	if b, st := EncodeInfo(FileStreamInformation{}, 0); st != StatusSuccess || len(b) != 0 {
		t.Fatalf("empty stream list: %v", st)
	}
	// smb2.getinfo.qfs_buffercheck: the FS classes with a name need their
	// C structure size (24 and 16) before anything is returned, then
	// overflow until the whole name fits.
	vol := FileFsVolumeInformation{VolumeLabel: "share"} // 18 + 10 bytes
	for n, want := range map[uint32]Status{17: StatusInfoLengthMismatch, 18: StatusInfoLengthMismatch, 23: StatusInfoLengthMismatch,
		24: StatusBufferOverflow, 27: StatusBufferOverflow, 28: StatusSuccess} {
		if b, st := EncodeInfo(vol, n); st != want || st == StatusBufferOverflow && len(b) != int(n) {
			t.Errorf("volume information in %d bytes: %v (%d bytes), want %v", n, st, len(b), want)
		}
	}
	attr := FileFsAttributeInformation{FileSystemName: "NTFS"} // 12 + 8 bytes
	for n, want := range map[uint32]Status{12: StatusInfoLengthMismatch, 15: StatusInfoLengthMismatch,
		16: StatusBufferOverflow, 19: StatusBufferOverflow, 20: StatusSuccess} {
		if b, st := EncodeInfo(attr, n); st != want || st == StatusBufferOverflow && len(b) != int(n) {
			t.Errorf("attribute information in %d bytes: %v (%d bytes), want %v", n, st, len(b), want)
		}
	}
}

func dirEntries() []DirEntry {
	return []DirEntry{
		{FileIndex: 0, Name: ".", FileAttributes: AttrDirectory, FileID: 1},
		{Name: "..", FileAttributes: AttrDirectory, FileID: 2, CreationTime: 5},
		{FileIndex: 7, CreationTime: 1, LastAccessTime: 2, LastWriteTime: 3, ChangeTime: 4, EndOfFile: 100, AllocationSize: 4096,
			FileAttributes: AttrArchive, EaSize: 9, ShortName: "LONGFI~1.TXT", FileID: 0xABCDEF, Name: "long file name.txt"},
		{Name: "\u00e9t\u00e9\U0001F600", FileID: 3},
	}
}

// project keeps the fields a class carries.
func project(class InfoClass, e DirEntry) DirEntry {
	l, _ := dirLayoutOf(class)
	out := DirEntry{FileIndex: e.FileIndex, Name: e.Name}
	if l.attrs {
		out.CreationTime, out.LastAccessTime, out.LastWriteTime, out.ChangeTime = e.CreationTime, e.LastAccessTime, e.LastWriteTime, e.ChangeTime
		out.EndOfFile, out.AllocationSize, out.FileAttributes = e.EndOfFile, e.AllocationSize, e.FileAttributes
	}
	if l.ea {
		out.EaSize = e.EaSize
	}
	if l.shortName {
		out.ShortName = e.ShortName
	}
	if l.fileID {
		out.FileID = e.FileID
	}
	return out
}

func TestDirEntries(t *testing.T) {
	entries := dirEntries()
	for class, fixed := range map[InfoClass]int{
		FileDirectoryInformationClass: 64, FileFullDirectoryInformationClass: 68, FileBothDirectoryInformationClass: 94,
		FileNamesInformationClass: 12, FileIdBothDirectoryInformationClass: 104, FileIdFullDirectoryInformationClass: 80,
	} {
		if n, ok := DirEntryFixedSize(class); !ok || n != fixed {
			t.Fatalf("class %d fixed size %d", class, n)
		}
		b, n, err := EncodeDirEntries(class, entries, 1<<16)
		if err != nil || n != len(entries) {
			t.Fatalf("class %d: %d entries, %v", class, n, err)
		}
		// Walk the chain: each entry 8-aligned, the last not padded.
		pos, count := 0, 0
		for {
			count++
			next := int(le.Uint32(b[pos:]))
			nameLenAt := 60 // FileNameLength follows the attributes
			if class == FileNamesInformationClass {
				nameLenAt = 8
			}
			nameLen := int(le.Uint32(b[pos+nameLenAt:]))
			if next == 0 {
				if pos+fixed+nameLen != len(b) {
					t.Fatalf("class %d: last entry ends at %d of %d", class, pos+fixed+nameLen, len(b))
				}
				break
			}
			if next%8 != 0 || next != align8(fixed+nameLen) {
				t.Fatalf("class %d: NextEntryOffset %d for name length %d", class, next, nameLen)
			}
			pos += next
		}
		if count != len(entries) {
			t.Fatalf("class %d: %d entries in the chain", class, count)
		}
		got, err := DecodeDirEntries(class, b)
		if err != nil || len(got) != len(entries) {
			t.Fatalf("class %d: %v", class, err)
		}
		for i := range got {
			if want := project(class, entries[i]); !reflect.DeepEqual(got[i], want) {
				t.Fatalf("class %d entry %d:\n got %+v\nwant %+v", class, i, got[i], want)
			}
		}
		// Truncation: a buffer that ends one byte short of the third
		// entry holds two; one byte short of the first holds none.
		third := 0
		for i := 0; i < 2; i++ {
			third += int(le.Uint32(b[third:]))
		}
		thirdEnd := third + fixed + 2*len("long file name.txt")
		tb, tn, _ := EncodeDirEntries(class, entries, thirdEnd-1)
		second := int(le.Uint32(b))
		if tn != 2 || len(tb) != second+fixed+2*len("..") || le.Uint32(tb[second:]) != 0 {
			t.Fatalf("class %d: truncated to %d entries, %d bytes", class, tn, len(tb))
		}
		if two, err := DecodeDirEntries(class, tb); err != nil || !reflect.DeepEqual(two, got[:2]) {
			t.Fatalf("class %d: truncated listing %+v %v", class, two, err)
		}
		if _, tn, _ := EncodeDirEntries(class, entries, thirdEnd); tn != 3 {
			t.Fatalf("class %d: exact fit holds %d entries", class, tn)
		}
		if tb, tn, _ := EncodeDirEntries(class, entries, fixed+1); tn != 0 || len(tb) != 0 {
			t.Fatalf("class %d: first entry does not fit, got %d", class, tn)
		}
	}
	b, _, _ := EncodeDirEntries(FileIdBothDirectoryInformationClass, entries[2:3], 1024)
	if b[68] != 24 || string(b[70:72]) != "L\x00" || le.Uint64(b[96:]) != 0xABCDEF || le.Uint32(b[60:]) != 36 || le.Uint32(b[64:]) != 9 {
		t.Fatalf("FileIdBothDirectoryInformation layout %x", b)
	}
	if _, _, err := EncodeDirEntries(FileAllInformationClass, entries, 1024); err != StatusInvalidInfoClass {
		t.Fatalf("class 18: %v", err)
	}
	if _, err := DecodeDirEntries(99, b); err != StatusInvalidInfoClass {
		t.Fatalf("class 99: %v", err)
	}
	// Short names longer than 12 UTF-16 units are cut.
	b, _, _ = EncodeDirEntries(FileBothDirectoryInformationClass, []DirEntry{{ShortName: "ABCDEFGHIJKLMNOP", Name: "x"}}, 1024)
	if b[68] != 24 || len(b) != 94+2 {
		t.Fatalf("long short name %x", b)
	}
	for name, mut := range map[string]func([]byte) []byte{
		"misaligned next":   func(b []byte) []byte { le.PutUint32(b, 20); return b },
		"next past end":     func(b []byte) []byte { le.PutUint32(b, uint32(align8(len(b)+1))); return b },
		"name past next":    func(b []byte) []byte { le.PutUint32(b[60:], 200); return b },
		"short name > 24":   func(b []byte) []byte { b[68] = 26; return b },
		"cut fixed part":    func(b []byte) []byte { return b[:int(le.Uint32(b))+50] },
		"odd name length":   func(b []byte) []byte { le.PutUint32(b[60:], 1); return b },
		"odd short name":    func(b []byte) []byte { b[68] = 1; return b },
		"name past the end": func(b []byte) []byte { return b[:len(b)-1] },
	} {
		b, _, _ := EncodeDirEntries(FileIdBothDirectoryInformationClass, entries, 1<<16)
		if _, err := DecodeDirEntries(FileIdBothDirectoryInformationClass, mut(b)); !errors.Is(err, StatusInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestFiletime(t *testing.T) {
	epoch := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := FiletimeOf(epoch); got != 116444736000000000 {
		t.Fatalf("1970: %d", got)
	}
	if got := FiletimeOf(time.Date(1601, 1, 1, 0, 0, 0, 100, time.UTC)); got != 1 {
		t.Fatalf("1601 + 100 ns: %d", got)
	}
	ts := time.Date(2024, 2, 29, 12, 34, 56, 123456789, time.FixedZone("x", 3600))
	ft := FiletimeOf(ts)
	if back := ft.Time(); !back.Equal(ts.Truncate(100)) || back.Location() != time.UTC {
		t.Fatalf("round trip %v → %d → %v", ts, ft, back)
	}
	if FiletimeOf(time.Time{}) != 0 || !Filetime(0).Time().IsZero() || !FiletimeStopUpdates.Time().IsZero() || !FiletimeResumeUpdate.Time().IsZero() {
		t.Fatal("zero and special values")
	}
	if got := FiletimeOf(time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)); got != 0 {
		t.Fatalf("before 1601: %d", got)
	}
	if got := FiletimeOf(time.Date(40000, 1, 1, 0, 0, 0, 0, time.UTC)); got != math.MaxInt64 {
		t.Fatalf("year 40000: %d", got)
	}
	if got := Filetime(math.MaxInt64).Time(); got.Year() != 30828 {
		t.Fatalf("largest FILETIME: %v", got)
	}
}

func TestSecurityDescriptor(t *testing.T) {
	owner, err := ParseSID("S-1-5-32-544")
	if err != nil || !reflect.DeepEqual(owner, SIDAdministrators) || owner.String() != "S-1-5-32-544" {
		t.Fatalf("%v %v", owner, err)
	}
	for _, bad := range []string{"", "S-1", "S-2-5", "S-1-x", "S-1-5-4294967296", "s-1-5", "S-1-281474976710656", "S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16"} {
		if _, err := ParseSID(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	sd := SecurityDescriptor{Owner: &SIDAdministrators, Group: &SIDUsers, DACL: &ACL{Revision: 2, ACEs: []ACE{{Type: AccessAllowedACEType, Mask: FileAllAccess, SID: SIDEveryone}}}}
	b := sd.Encode()
	// Header(20) + owner(16) + group(16) + ACL(8 + ACE 8+12).
	want := []byte{
		1, 0, 0x04, 0x80, 20, 0, 0, 0, 36, 0, 0, 0, 0, 0, 0, 0, 52, 0, 0, 0,
		1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x20, 2, 0, 0,
		1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x21, 2, 0, 0,
		2, 0, 28, 0, 1, 0, 0, 0,
		0, 0, 20, 0, 0xFF, 0x01, 0x1F, 0x00, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("SD\n got %x\nwant %x", b, want)
	}
	got, err := DecodeSecurityDescriptor(b)
	if err != nil || !reflect.DeepEqual(got, sd) {
		t.Fatalf("%+v %v", got, err)
	}
	onlyDACL := sd.Select(DACLSecurityInformation)
	if onlyDACL.Owner != nil || onlyDACL.Group != nil || onlyDACL.DACL == nil {
		t.Fatalf("Select %+v", onlyDACL)
	}
	if b := onlyDACL.Encode(); le.Uint32(b[4:]) != 0 || le.Uint32(b[16:]) != 20 {
		t.Fatalf("DACL-only offsets %x", b[:20])
	}
	// Other ACE types keep their body.
	odd := SecurityDescriptor{SACL: &ACL{Revision: 4, ACEs: []ACE{{Type: 0x05, Flags: 2, Raw: []byte{1, 2, 3, 4}}}}}
	if got, err := DecodeSecurityDescriptor(odd.Encode()); err != nil || !reflect.DeepEqual(got, odd) {
		t.Fatalf("object ACE %+v %v", got, err)
	}
	for name, mut := range map[string]func([]byte) []byte{
		"short":             func(b []byte) []byte { return b[:19] },
		"revision":          func(b []byte) []byte { b[0] = 2; return b },
		"not self-relative": func(b []byte) []byte { b[3] = 0; return b },
		"owner offset":      func(b []byte) []byte { le.PutUint32(b[4:], uint32(len(b))); return b },
		"owner in header":   func(b []byte) []byte { le.PutUint32(b[4:], 8); return b },
		"sid count":         func(b []byte) []byte { b[37] = 15; return b },
		"acl size":          func(b []byte) []byte { le.PutUint16(b[54:], 200); return b },
		"ace count":         func(b []byte) []byte { le.PutUint16(b[56:], 2); return b },
		"ace size":          func(b []byte) []byte { le.PutUint16(b[62:], 24); return b },
		"ace sid mismatch":  func(b []byte) []byte { le.PutUint16(b[62:], 16); return b },
	} {
		if _, err := DecodeSecurityDescriptor(mut(bytes.Clone(b))); !errors.Is(err, StatusInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
