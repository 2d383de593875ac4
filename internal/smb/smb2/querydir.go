package smb2

// QueryDirectoryRequest is an SMB2 QUERY_DIRECTORY request (MS-SMB2 2.2.33).
type QueryDirectoryRequest struct {
	FileInformationClass InfoClass
	Flags                uint8 // QueryDir*
	FileIndex            uint32
	FileID               FileID
	// Pattern is the search pattern (`*`, a name, DOS wildcards); empty
	// when the client sent none.
	Pattern            string
	OutputBufferLength uint32
}

// DecodeQueryDirectoryRequest decodes a QUERY_DIRECTORY request PDU. The
// pattern must be valid UTF-16LE inside the message.
func DecodeQueryDirectoryRequest(msg []byte) (QueryDirectoryRequest, error) {
	const what = "request"
	d, err := decodeBody(msg, CommandQueryDirectory, what, 33)
	if err != nil {
		return QueryDirectoryRequest{}, err
	}
	r := QueryDirectoryRequest{
		FileInformationClass: InfoClass(d.u8(2)),
		Flags:                d.u8(3),
		FileIndex:            d.u32(4),
		FileID:               d.fileID(8),
		OutputBufferLength:   d.u32(28),
	}
	raw, ok := d.buffer(uint32(d.u16(24)), uint32(d.u16(26)), 32)
	if !ok {
		return QueryDirectoryRequest{}, malformedCmd(CommandQueryDirectory, what, "pattern outside the message")
	}
	if r.Pattern, ok = decodeUTF16(raw); !ok {
		return QueryDirectoryRequest{}, malformedCmd(CommandQueryDirectory, what, "pattern is not valid UTF-16")
	}
	return r, nil
}

// Encode returns the request body; the pattern is at 0x60.
func (r QueryDirectoryRequest) Encode() []byte {
	p := utf16le(r.Pattern)
	e := newBody(33, 33+len(p))
	e.u8(uint8(r.FileInformationClass))
	e.u8(r.Flags)
	e.u32(r.FileIndex)
	e.fileID(r.FileID)
	e.u16(HeaderSize + 32)
	e.u16(uint16(len(p)))
	e.u32(r.OutputBufferLength)
	e.bytes(p)
	e.minBody(33)
	return e.b
}

// QueryDirectoryResponse is an SMB2 QUERY_DIRECTORY response (MS-SMB2
// 2.2.34). Output is the output of EncodeDirEntries.
type QueryDirectoryResponse struct {
	Output []byte
}

// Encode returns the response body; the output starts at 0x48.
func (r QueryDirectoryResponse) Encode() []byte { return encodeOutput(r.Output) }

// DecodeQueryDirectoryResponse decodes a QUERY_DIRECTORY response PDU.
func DecodeQueryDirectoryResponse(msg []byte) (QueryDirectoryResponse, error) {
	out, err := decodeOutput(msg, CommandQueryDirectory)
	return QueryDirectoryResponse{Output: out}, err
}

// DirEntry is one directory entry, with every field any of the supported
// directory information classes carries; each class encodes its subset.
type DirEntry struct {
	FileIndex      uint32
	CreationTime   Filetime
	LastAccessTime Filetime
	LastWriteTime  Filetime
	ChangeTime     Filetime
	EndOfFile      int64
	AllocationSize int64
	FileAttributes FileAttributes
	EaSize         uint32
	// ShortName is the 8.3 name (classes 3 and 37); at most 12 UTF-16
	// code units. Azure Files has none, so it is normally empty.
	ShortName string
	FileID    uint64 // classes 37 and 38
	Name      string
}

// dirLayout describes the fixed part of a directory information class.
type dirLayout struct {
	fixed     int
	attrs     bool // times, sizes and attributes (all but FileNamesInformation)
	ea        bool // EaSize
	shortName bool // ShortNameLength, Reserved, ShortName[24]
	fileID    bool // FileId (with its Reserved before it)
}

func dirLayoutOf(class InfoClass) (dirLayout, bool) {
	switch class {
	case FileDirectoryInformationClass:
		return dirLayout{fixed: 64, attrs: true}, true
	case FileFullDirectoryInformationClass:
		return dirLayout{fixed: 68, attrs: true, ea: true}, true
	case FileBothDirectoryInformationClass:
		return dirLayout{fixed: 94, attrs: true, ea: true, shortName: true}, true
	case FileNamesInformationClass:
		return dirLayout{fixed: 12}, true
	case FileIdBothDirectoryInformationClass:
		return dirLayout{fixed: 104, attrs: true, ea: true, shortName: true, fileID: true}, true
	case FileIdFullDirectoryInformationClass:
		return dirLayout{fixed: 80, attrs: true, ea: true, fileID: true}, true
	}
	return dirLayout{}, false
}

// DirEntryFixedSize returns the size of the fixed part of one entry of a
// directory information class, and false for a class this package does
// not encode (answer STATUS_INVALID_INFO_CLASS).
func DirEntryFixedSize(class InfoClass) (int, bool) {
	l, ok := dirLayoutOf(class)
	return l.fixed, ok
}

// EncodeDirEntries encodes entries in the given directory information
// class (MS-FSCC 2.4: FileDirectoryInformation 1, FileFullDirectory 2,
// FileBothDirectory 3, FileNames 12, FileIdBothDirectory 37,
// FileIdFullDirectory 38) into at most maxLen bytes, the request's
// OutputBufferLength. Each entry starts 8-byte aligned; NextEntryOffset
// links them and is 0 on the last; the last entry is not padded.
//
// It returns the buffer and how many entries it holds: the first n of
// entries, stopping at the first that does not fit whole. n == 0 with
// entries left means not even one fits; MS-FSA 2.1.5.6.3 then answers
// STATUS_INFO_LENGTH_MISMATCH (if maxLen is below the fixed size) or
// STATUS_BUFFER_OVERFLOW. An unsupported class returns
// StatusInvalidInfoClass.
func EncodeDirEntries(class InfoClass, entries []DirEntry, maxLen int) ([]byte, int, error) {
	l, ok := dirLayoutOf(class)
	if !ok {
		return nil, 0, StatusInvalidInfoClass
	}
	e := enc{}
	prev := -1
	n := 0
	for _, ent := range entries {
		name := utf16le(ent.Name)
		start := align8(len(e.b))
		if prev < 0 {
			start = 0
		}
		if start+l.fixed+len(name) > maxLen {
			break
		}
		e.zero(start - len(e.b))
		if prev >= 0 {
			e.put32(prev, uint32(start-prev))
		}
		prev = start
		e.u32(0) // NextEntryOffset
		e.u32(ent.FileIndex)
		if l.attrs {
			e.i64(int64(ent.CreationTime))
			e.i64(int64(ent.LastAccessTime))
			e.i64(int64(ent.LastWriteTime))
			e.i64(int64(ent.ChangeTime))
			e.i64(ent.EndOfFile)
			e.i64(ent.AllocationSize)
			e.u32(uint32(ent.FileAttributes))
		}
		e.u32(uint32(len(name)))
		if l.ea {
			e.u32(ent.EaSize)
		}
		if l.shortName {
			short := utf16le(ent.ShortName)
			if len(short) > 24 {
				short = short[:24]
			}
			e.u8(uint8(len(short)))
			e.u8(0)
			e.bytes(short)
			e.zero(24 - len(short))
		}
		if l.fileID {
			if l.shortName {
				e.u16(0)
			} else {
				e.u32(0)
			}
			e.u64(ent.FileID)
		}
		e.bytes(name)
		n++
	}
	return e.b, n, nil
}

// DecodeDirEntries decodes a directory listing in the given class. It is
// the inverse of EncodeDirEntries (fields the class lacks stay zero), for
// tests and fuzzing. Each NextEntryOffset must be a multiple of 8 that
// covers its entry and stays inside buf.
func DecodeDirEntries(class InfoClass, buf []byte) ([]DirEntry, error) {
	const what = "directory information"
	l, ok := dirLayoutOf(class)
	if !ok {
		return nil, StatusInvalidInfoClass
	}
	var out []DirEntry
	for pos := 0; pos < len(buf); {
		b := buf[pos:]
		if len(b) < l.fixed {
			return nil, malformedCmd(CommandQueryDirectory, what, "entry shorter than its fixed part")
		}
		var ent DirEntry
		next := int(le.Uint32(b))
		ent.FileIndex = le.Uint32(b[4:])
		o := 8
		if l.attrs {
			ent.CreationTime = Filetime(le.Uint64(b[8:]))
			ent.LastAccessTime = Filetime(le.Uint64(b[16:]))
			ent.LastWriteTime = Filetime(le.Uint64(b[24:]))
			ent.ChangeTime = Filetime(le.Uint64(b[32:]))
			ent.EndOfFile = int64(le.Uint64(b[40:]))
			ent.AllocationSize = int64(le.Uint64(b[48:]))
			ent.FileAttributes = FileAttributes(le.Uint32(b[56:]))
			o = 60
		}
		nameLen := int(le.Uint32(b[o:]))
		o += 4
		if l.ea {
			ent.EaSize = le.Uint32(b[o:])
			o += 4
		}
		if l.shortName {
			sl := int(b[o])
			if sl > 24 {
				return nil, malformedCmd(CommandQueryDirectory, what, "ShortNameLength over 24")
			}
			if ent.ShortName, ok = decodeUTF16(b[o+2 : o+2+sl]); !ok {
				return nil, malformedCmd(CommandQueryDirectory, what, "short name is not valid UTF-16")
			}
			o += 26
		}
		if l.fileID {
			if l.shortName {
				o += 2
			} else {
				o += 4
			}
			ent.FileID = le.Uint64(b[o:])
		}
		extent := len(b)
		if next != 0 {
			if next%8 != 0 || next > len(b) {
				return nil, malformedCmd(CommandQueryDirectory, what, "bad NextEntryOffset")
			}
			extent = next
		}
		if nameLen > extent-l.fixed {
			return nil, malformedCmd(CommandQueryDirectory, what, "name outside the entry")
		}
		if ent.Name, ok = decodeUTF16(b[l.fixed : l.fixed+nameLen]); !ok {
			return nil, malformedCmd(CommandQueryDirectory, what, "name is not valid UTF-16")
		}
		out = append(out, ent)
		if next == 0 {
			break
		}
		pos += next
	}
	return out, nil
}
