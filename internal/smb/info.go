package smb

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// Filesystem geometry reported to clients: 4 KiB allocation units of
// eight 512-byte sectors.
const (
	bytesPerSector   = 512
	sectorsPerUnit   = 8
	allocationUnit   = bytesPerSector * sectorsPerUnit
	fsDeviceMounted  = 0x20 // FILE_DEVICE_IS_MOUNTED
	maxComponentName = 255
)

// fileInfoAccess is the access a FILE QUERY_INFO class needs (MS-FSA
// 2.1.5.12: the classes with times and attributes need
// FILE_READ_ATTRIBUTES; the others none).
var fileInfoAccess = map[smb2.InfoClass]uint32{
	smb2.FileBasicInformationClass:        file.AccessReadAttributes,
	smb2.FileAllInformationClass:          file.AccessReadAttributes,
	smb2.FileNetworkOpenInformationClass:  file.AccessReadAttributes,
	smb2.FileAttributeTagInformationClass: file.AccessReadAttributes,
	smb2.FileFullEaInformationClass:       file.AccessReadEA,
}

// queryInfo answers QUERY_INFO (MS-SMB2 3.3.5.20; MS-FSCC 2.4 and 2.5).
func (c *conn) queryInfo(r *request) ([]byte, error) {
	req, err := smb2.DecodeQueryInfoRequest(r.msg)
	if err != nil {
		return nil, err
	}
	if err := c.checkCharge(r, chargeNeeded(uint64(len(req.Input)), uint64(req.OutputBufferLength))); err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	if int(req.OutputBufferLength) > c.maxIO {
		return nil, smb2.StatusInvalidParameter
	}
	var info smb2.Info
	switch req.InfoType {
	case smb2.InfoTypeFile:
		info, err = c.fileInfo(r, o, req.FileInfoClass)
	case smb2.InfoTypeFilesystem:
		info, err = c.fsInfo(r, o, req.FileInfoClass)
	case smb2.InfoTypeSecurity:
		return c.securityInfo(r, o, req)
	case smb2.InfoTypeQuota:
		return nil, smb2.StatusNotSupported
	default:
		return nil, smb2.StatusInvalidParameter
	}
	if err != nil {
		return nil, err
	}
	out, status := smb2.EncodeInfo(info, req.OutputBufferLength)
	if status.IsError() {
		return nil, status
	}
	body := smb2.QueryInfoResponse{Output: out}.Encode()
	if status != smb2.StatusSuccess {
		return body, status
	}
	return body, nil
}

// fileInfo builds a FILE information class of o.
func (c *conn) fileInfo(r *request, o *open, class smb2.InfoClass) (smb2.Info, error) {
	if need := fileInfoAccess[class]; need != 0 && o.f.GrantedAccess&need == 0 {
		return nil, smb2.StatusAccessDenied
	}
	switch class {
	case smb2.FileFullEaInformationClass:
		return nil, smb2.StatusNoEASOnFile
	case smb2.FileAccessInformationClass:
		return smb2.FileAccessInformation{AccessFlags: smb2.AccessMask(o.f.GrantedAccess)}, nil
	case smb2.FileAlignmentInformationClass:
		return smb2.FileAlignmentInformation{}, nil
	case smb2.FileModeInformationClass:
		return smb2.FileModeInformation{Mode: o.mode}, nil
	case smb2.FilePositionInformationClass:
		return smb2.FilePositionInformation{CurrentByteOffset: o.position}, nil
	case smb2.FileAlternateNameInformationClass:
		// Azure Files keeps no 8.3 names. smbclient's allinfo accepts
		// only NOT_SUPPORTED (or NOT_IMPLEMENTED) as "no short name".
		return nil, smb2.StatusNotSupported
	}
	in, err := c.srv.vfs.Info(c.ctx, o.f)
	if err != nil {
		return nil, err
	}
	nop := netOpen(in)
	basic := smb2.FileBasicInformation{
		CreationTime:   nop.CreationTime,
		LastAccessTime: nop.LastAccessTime,
		LastWriteTime:  nop.LastWriteTime,
		ChangeTime:     nop.ChangeTime,
		FileAttributes: nop.FileAttributes,
	}
	// A delete-pending file's only link counts as gone (MS-FSA
	// 2.1.5.12.27: links marked for deletion are not counted;
	// smb2.setinfo).
	links := uint32(1)
	if in.DeletePending {
		links = 0
	}
	standard := smb2.FileStandardInformation{
		AllocationSize: in.Allocation, EndOfFile: in.Size, NumberOfLinks: links,
		DeletePending: in.DeletePending, Directory: in.Dir,
	}
	switch class {
	case smb2.FileBasicInformationClass:
		return basic, nil
	case smb2.FileStandardInformationClass:
		return standard, nil
	case smb2.FileInternalInformationClass:
		return smb2.FileInternalInformation{IndexNumber: in.FileID}, nil
	case smb2.FileEaInformationClass:
		return smb2.FileEaInformation{}, nil
	case smb2.FileNetworkOpenInformationClass:
		return nop, nil
	case smb2.FileAttributeTagInformationClass:
		return smb2.FileAttributeTagInformation{FileAttributes: basic.FileAttributes}, nil
	case smb2.FileCompressionInformationClass:
		return smb2.FileCompressionInformation{CompressedFileSize: in.Size}, nil
	case smb2.FileStreamInformationClass:
		if in.Dir {
			return smb2.FileStreamInformation{}, nil
		}
		return smb2.FileStreamInformation{Streams: []smb2.StreamEntry{{Name: "::$DATA", Size: in.Size, AllocationSize: in.Allocation}}}, nil
	case smb2.FileAllInformationClass, smb2.FileNormalizedNameInformationClass:
		comps, err := c.srv.vfs.Path(c.ctx, o.f)
		if err != nil {
			return nil, err
		}
		name := strings.Join(comps, `\`)
		if class == smb2.FileNormalizedNameInformationClass {
			if c.dialect < smb2.Dialect311 {
				return nil, smb2.StatusNotSupported
			}
			return smb2.FileNameInformation{FileName: name}, nil
		}
		return smb2.FileAllInformation{
			Basic: basic, Standard: standard,
			Internal: smb2.FileInternalInformation{IndexNumber: in.FileID},
			Access:   smb2.FileAccessInformation{AccessFlags: smb2.AccessMask(o.f.GrantedAccess)},
			Position: smb2.FilePositionInformation{CurrentByteOffset: o.position},
			Mode:     smb2.FileModeInformation{Mode: o.mode},
			Name:     smb2.FileNameInformation{FileName: `\` + name},
		}, nil
	}
	return nil, smb2.StatusInvalidInfoClass
}

// fsInfo builds a FILESYSTEM information class of o's share.
func (c *conn) fsInfo(r *request, o *open, class smb2.InfoClass) (smb2.Info, error) {
	switch class {
	case smb2.FileFsDeviceInformationClass:
		return smb2.FileFsDeviceInformation{DeviceType: smb2.FileDeviceDisk, Characteristics: fsDeviceMounted}, nil
	case smb2.FileFsAttributeInformationClass:
		return smb2.FileFsAttributeInformation{
			FileSystemAttributes:       smb2.FSCasePreservedNames | smb2.FSUnicodeOnDisk | smb2.FSPersistentACLs,
			MaximumComponentNameLength: maxComponentName,
			FileSystemName:             "NTFS",
		}, nil
	case smb2.FileFsSectorSizeInformationClass:
		return smb2.FileFsSectorSizeInformation{
			LogicalBytesPerSector:                                 bytesPerSector,
			PhysicalBytesPerSectorForAtomicity:                    bytesPerSector,
			PhysicalBytesPerSectorForPerformance:                  bytesPerSector,
			FileSystemEffectivePhysicalBytesPerSectorForAtomicity: bytesPerSector,
			Flags: 0x3, // ALIGNED_DEVICE | PARTITION_ALIGNED_ON_DEVICE
		}, nil
	case smb2.FileFsControlInformationClass:
		// No quota tracking per user: quotas disabled, no limits.
		return smb2.FileFsControlInformation{DefaultQuotaThreshold: ^uint64(0), DefaultQuotaLimit: ^uint64(0)}, nil
	case smb2.FileFsObjectIDInformationClass:
		var id smb2.FileFsObjectIDInformation
		binary.LittleEndian.PutUint64(id.ObjectID[:], volumeID(o.tree))
		return id, nil
	case smb2.FileFsVolumeInformationClass, smb2.FileFsSizeInformationClass, smb2.FileFsFullSizeInformationClass:
	default:
		return nil, smb2.StatusInvalidInfoClass
	}
	fi, err := c.srv.vfs.FSInfo(c.ctx, o.tree.sess.account, o.tree.share)
	if err != nil {
		return nil, err
	}
	total := fi.QuotaBytes / allocationUnit
	free := max(fi.QuotaBytes-fi.UsedBytes, 0) / allocationUnit
	switch class {
	case smb2.FileFsVolumeInformationClass:
		return smb2.FileFsVolumeInformation{
			VolumeCreationTime: smb2.FiletimeOf(fi.Created),
			VolumeSerialNumber: uint32(volumeID(o.tree)),
			VolumeLabel:        o.tree.share,
		}, nil
	case smb2.FileFsSizeInformationClass:
		return smb2.FileFsSizeInformation{TotalAllocationUnits: total, AvailableAllocationUnits: free, SectorsPerAllocationUnit: sectorsPerUnit, BytesPerSector: bytesPerSector}, nil
	}
	return smb2.FileFsFullSizeInformation{TotalAllocationUnits: total, CallerAvailableAllocationUnits: free, ActualAvailableAllocationUnits: free, SectorsPerAllocationUnit: sectorsPerUnit, BytesPerSector: bytesPerSector}, nil
}

// securityInfo answers a security descriptor query with a fixed
// descriptor (no ACLs are kept): owner Administrators, group Users, a
// DACL granting Everyone full access. A buffer too small gets
// STATUS_BUFFER_TOO_SMALL with the size needed (MS-SMB2 3.3.5.20.3).
func (c *conn) securityInfo(r *request, o *open, req smb2.QueryInfoRequest) ([]byte, error) {
	if o.f.GrantedAccess&file.AccessReadControl == 0 {
		return nil, smb2.StatusAccessDenied
	}
	owner, group := smb2.SIDAdministrators, smb2.SIDUsers
	sd := smb2.SecurityDescriptor{
		Control: smb2.SEDACLPresent | smb2.SESelfRelative,
		Owner:   &owner, Group: &group,
		DACL: &smb2.ACL{Revision: 2, ACEs: []smb2.ACE{{Type: smb2.AccessAllowedACEType, Mask: smb2.FileAllAccess, SID: smb2.SIDEveryone}}},
	}
	out := sd.Select(req.AdditionalInformation).Encode()
	if len(out) > int(req.OutputBufferLength) {
		r.errData = binary.LittleEndian.AppendUint32(nil, uint32(len(out)))
		return nil, smb2.StatusBufferTooSmall
	}
	return smb2.QueryInfoResponse{Output: out}.Encode(), nil
}

// setInfo answers SET_INFO (MS-SMB2 3.3.5.21; MS-FSCC 2.4).
func (c *conn) setInfo(r *request) ([]byte, error) {
	req, err := smb2.DecodeSetInfoRequest(r.msg)
	if err != nil {
		return nil, err
	}
	if err := c.checkCharge(r, chargeNeeded(uint64(len(req.Buffer)), 0)); err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	if len(req.Buffer) > c.maxIO {
		return nil, smb2.StatusInvalidParameter
	}
	switch req.InfoType {
	case smb2.InfoTypeFile:
		if err := c.setFileInfo(o, req.FileInfoClass, req.Buffer); err != nil {
			return nil, err
		}
	case smb2.InfoTypeSecurity:
		if err := c.setSecurity(o, req); err != nil {
			return nil, err
		}
	case smb2.InfoTypeFilesystem, smb2.InfoTypeQuota:
		return nil, smb2.StatusNotSupported
	default:
		return nil, smb2.StatusInvalidParameter
	}
	return smb2.SetInfoResponse{}.Encode(), nil
}

// setFixedSize is the least buffer each settable class needs
// (STATUS_INFO_LENGTH_MISMATCH below it).
var setFixedSize = map[smb2.InfoClass]int{
	smb2.FileBasicInformationClass:       36,
	smb2.FileRenameInformationClass:      20,
	smb2.FileDispositionInformationClass: 1,
	smb2.FilePositionInformationClass:    8,
	smb2.FileModeInformationClass:        4,
	smb2.FileAllocationInformationClass:  8,
	smb2.FileEndOfFileInformationClass:   8,
}

func (c *conn) setFileInfo(o *open, class smb2.InfoClass, buf []byte) error {
	n, ok := setFixedSize[class]
	if !ok {
		switch class {
		case smb2.FileFullEaInformationClass:
			return smb2.StatusEASNotSupported
		case smb2.FileLinkInformationClass:
			return smb2.StatusNotSupported
		}
		return smb2.StatusInvalidInfoClass
	}
	if len(buf) < n {
		return smb2.StatusInfoLengthMismatch
	}
	v := c.srv.vfs
	switch class {
	case smb2.FileBasicInformationClass:
		if len(buf) < 40 {
			buf = append(append([]byte(nil), buf...), make([]byte, 40-len(buf))...)
		}
		b, err := smb2.DecodeFileBasicInformation(buf)
		if err != nil {
			return err
		}
		bi, ok := basicInfo(b)
		if !ok {
			return smb2.StatusInvalidParameter
		}
		p := c.watchedPath(o)
		if _, err = v.SetBasic(c.ctx, o.f, bi); err != nil {
			return err
		}
		c.reportChange(o, p, smb2.FileActionModified, basicFilter(bi))
		return nil
	case smb2.FileRenameInformationClass:
		ri, err := smb2.DecodeFileRenameInformation(buf)
		if err != nil {
			return err
		}
		if ri.RootDirectory != 0 {
			return smb2.StatusInvalidParameter
		}
		comps, err := splitPath(ri.FileName, true)
		if err != nil {
			return err
		}
		if len(comps) == 0 {
			return smb2.StatusObjectNameInvalid
		}
		if err := newName(comps[len(comps)-1]); err != nil {
			return err
		}
		p := c.watchedPath(o)
		if err := v.Rename(c.ctx, o.f, comps, ri.ReplaceIfExists); err != nil {
			return err
		}
		c.reportRename(o, p, comps)
		return nil
	case smb2.FileDispositionInformationClass:
		d, err := smb2.DecodeFileDispositionInformation(buf)
		if err != nil {
			return err
		}
		return v.SetDisposition(c.ctx, o.f, d.DeletePending)
	case smb2.FilePositionInformationClass:
		p, err := smb2.DecodeFilePositionInformation(buf)
		if err != nil {
			return err
		}
		if p.CurrentByteOffset < 0 {
			return smb2.StatusInvalidParameter
		}
		o.position = p.CurrentByteOffset
		return nil
	case smb2.FileModeInformationClass:
		m, err := smb2.DecodeFileModeInformation(buf)
		if err != nil {
			return err
		}
		// Only these mode bits may be set (MS-FSA 2.1.5.15.9).
		const settable = uint32(smb2.FileWriteThrough | smb2.FileSequentialOnly | smb2.FileSynchronousIOAlert | smb2.FileSynchronousIONonalert)
		if m.Mode&^settable != 0 {
			return smb2.StatusInvalidParameter
		}
		o.mode = o.mode&^settable | m.Mode
		return nil
	case smb2.FileAllocationInformationClass:
		a, err := smb2.DecodeFileAllocationInformation(buf)
		if err != nil {
			return err
		}
		p := c.watchedPath(o)
		if err := v.SetAllocation(c.ctx, o.f, a.AllocationSize); err != nil {
			return err
		}
		c.reportChange(o, p, smb2.FileActionModified, smb2.FileNotifyChangeSize)
		return nil
	case smb2.FileEndOfFileInformationClass:
		e, err := smb2.DecodeFileEndOfFileInformation(buf)
		if err != nil {
			return err
		}
		if e.EndOfFile < 0 {
			return smb2.StatusInvalidParameter
		}
		p := c.watchedPath(o)
		if err := v.SetEndOfFile(c.ctx, o.f, e.EndOfFile); err != nil {
			return err
		}
		c.reportChange(o, p, smb2.FileActionModified, smb2.FileNotifyChangeSize|smb2.FileNotifyChangeLastWrite)
		return nil
	}
	return smb2.StatusInvalidInfoClass
}

// basicFilter is the CHANGE_NOTIFY filter a FileBasicInformation set
// matches: the attributes and times it gives.
func basicFilter(bi file.BasicInfo) uint32 {
	var f uint32
	if bi.Attributes != 0 {
		f |= smb2.FileNotifyChangeAttributes
	}
	if !bi.Created.IsZero() {
		f |= smb2.FileNotifyChangeCreation
	}
	if !bi.LastAccess.IsZero() {
		f |= smb2.FileNotifyChangeLastAccess
	}
	if !bi.LastWrite.IsZero() {
		f |= smb2.FileNotifyChangeLastWrite
	}
	return f
}

// basicInfo converts a SET_INFO FileBasicInformation for the VFS: 0
// leaves a time, -1 freezes it and -2 thaws it (MS-FSCC 2.4.7); below
// -2 is invalid (MS-FSA 2.1.5.15.2: ok false).
func basicInfo(b smb2.FileBasicInformation) (file.BasicInfo, bool) {
	bi := file.BasicInfo{Attributes: file.Attributes(b.FileAttributes)}
	for _, t := range []struct {
		ft   smb2.Filetime
		dst  *time.Time
		time file.Times
	}{
		{b.CreationTime, &bi.Created, file.TimeCreated},
		{b.LastAccessTime, &bi.LastAccess, file.TimeLastAccess},
		{b.LastWriteTime, &bi.LastWrite, file.TimeLastWrite},
		{b.ChangeTime, &bi.Changed, file.TimeChanged},
	} {
		switch {
		case t.ft == smb2.FiletimeStopUpdates:
			bi.Freeze |= t.time
		case t.ft == smb2.FiletimeResumeUpdate:
			bi.Thaw |= t.time
		case t.ft < smb2.FiletimeResumeUpdate:
			return file.BasicInfo{}, false
		default:
			*t.dst = t.ft.Time()
		}
	}
	return bi, true
}

// setSecurity checks a security descriptor SET_INFO and discards it: the
// service keeps no ACLs (every open is granted what it asks), so a
// descriptor changes nothing. The open needs WRITE_OWNER to set the owner
// or group and WRITE_DAC to set the DACL (MS-SMB2 3.3.5.21.3); a
// malformed descriptor is STATUS_INVALID_PARAMETER. Clients (smbtorture's
// setup helpers, Windows Explorer copies) set descriptors routinely and
// fail outright when refused.
func (c *conn) setSecurity(o *open, req smb2.SetInfoRequest) error {
	need := uint32(0)
	if req.AdditionalInformation&(smb2.OwnerSecurityInformation|smb2.GroupSecurityInformation) != 0 {
		need |= file.AccessWriteOwner
	}
	if req.AdditionalInformation&smb2.DACLSecurityInformation != 0 {
		need |= file.AccessWriteDAC
	}
	if req.AdditionalInformation&smb2.SACLSecurityInformation != 0 {
		need |= file.AccessSystemSecurity
	}
	if o.f.GrantedAccess&need != need {
		return smb2.StatusAccessDenied
	}
	if _, err := smb2.DecodeSecurityDescriptor(req.Buffer); err != nil {
		return smb2.StatusInvalidParameter
	}
	return nil
}
