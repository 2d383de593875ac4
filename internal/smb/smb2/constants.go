package smb2

import "fmt"

// Dialect is an SMB2 dialect revision (MS-SMB2 2.2.3).
type Dialect uint16

// Dialects.
const (
	Dialect202      Dialect = 0x0202
	Dialect210      Dialect = 0x0210
	Dialect300      Dialect = 0x0300
	Dialect302      Dialect = 0x0302
	Dialect311      Dialect = 0x0311
	DialectWildcard Dialect = 0x02FF // answer to an SMB1 NEGOTIATE offering "SMB 2.???"
)

func (d Dialect) String() string {
	switch d {
	case Dialect202:
		return "2.0.2"
	case Dialect210:
		return "2.1"
	case Dialect300:
		return "3.0"
	case Dialect302:
		return "3.0.2"
	case Dialect311:
		return "3.1.1"
	case DialectWildcard:
		return "2.???"
	}
	return fmt.Sprintf("0x%04X", uint16(d))
}

// SecurityMode is the NEGOTIATE SecurityMode field (MS-SMB2 2.2.3). The
// SESSION_SETUP request carries the same bits in one byte.
type SecurityMode uint16

// Security modes.
const (
	SigningEnabled  SecurityMode = 0x0001
	SigningRequired SecurityMode = 0x0002
)

// Capabilities are the global capabilities (MS-SMB2 2.2.3).
type Capabilities uint32

// Capabilities. The server advertises CapLargeMTU, and CapEncryption to
// SMB 3.0 and 3.0.2 clients when it encrypts (`go doc ./internal/smb`, "SMB
// front end", says why).
const (
	CapDFS               Capabilities = 0x00000001
	CapLeasing           Capabilities = 0x00000002
	CapLargeMTU          Capabilities = 0x00000004
	CapMultiChannel      Capabilities = 0x00000008
	CapPersistentHandles Capabilities = 0x00000010
	CapDirectoryLeasing  Capabilities = 0x00000020
	CapEncryption        Capabilities = 0x00000040
	CapNotifications     Capabilities = 0x00000080
)

// SessionFlags are the SESSION_SETUP response flags (MS-SMB2 2.2.6).
type SessionFlags uint16

// Session flags.
const (
	SessionFlagIsGuest     SessionFlags = 0x0001
	SessionFlagIsNull      SessionFlags = 0x0002
	SessionFlagEncryptData SessionFlags = 0x0004
)

// SessionSetupFlagBinding is the SESSION_SETUP request flag that binds a
// new channel to an existing session (multichannel; not supported, reply
// STATUS_REQUEST_NOT_ACCEPTED).
const SessionSetupFlagBinding uint8 = 0x01

// Tree connect values (MS-SMB2 2.2.9, 2.2.10).
const (
	TreeConnectFlagClusterReconnect uint16 = 0x0001
	TreeConnectFlagRedirectToOwner  uint16 = 0x0002
	TreeConnectFlagExtensionPresent uint16 = 0x0004

	ShareTypeDisk  uint8 = 0x01
	ShareTypePipe  uint8 = 0x02
	ShareTypePrint uint8 = 0x03

	ShareFlagManualCaching         uint32 = 0x00000000
	ShareFlagAutoCaching           uint32 = 0x00000010
	ShareFlagVDOCaching            uint32 = 0x00000020
	ShareFlagNoCaching             uint32 = 0x00000030
	ShareFlagDFS                   uint32 = 0x00000001
	ShareFlagDFSRoot               uint32 = 0x00000002
	ShareFlagAccessBasedDirEnum    uint32 = 0x00000800
	ShareFlagEncryptData           uint32 = 0x00008000
	ShareCapDFS                    uint32 = 0x00000008
	ShareCapContinuousAvailability uint32 = 0x00000010
	ShareCapScaleout               uint32 = 0x00000020
	ShareCapCluster                uint32 = 0x00000040
	ShareCapAsymmetric             uint32 = 0x00000080
	ShareCapRedirectToOwner        uint32 = 0x00000100
)

// AccessMask is an access mask (MS-SMB2 2.2.13.1.1, MS-DTYP 2.4.3).
type AccessMask uint32

// Access rights.
const (
	FileReadData         AccessMask = 0x00000001 // also FILE_LIST_DIRECTORY
	FileWriteData        AccessMask = 0x00000002 // also FILE_ADD_FILE
	FileAppendData       AccessMask = 0x00000004 // also FILE_ADD_SUBDIRECTORY
	FileReadEA           AccessMask = 0x00000008
	FileWriteEA          AccessMask = 0x00000010
	FileExecute          AccessMask = 0x00000020 // also FILE_TRAVERSE
	FileDeleteChild      AccessMask = 0x00000040
	FileReadAttributes   AccessMask = 0x00000080
	FileWriteAttributes  AccessMask = 0x00000100
	Delete               AccessMask = 0x00010000
	ReadControl          AccessMask = 0x00020000
	WriteDAC             AccessMask = 0x00040000
	WriteOwner           AccessMask = 0x00080000
	Synchronize          AccessMask = 0x00100000
	AccessSystemSecurity AccessMask = 0x01000000
	MaximumAllowed       AccessMask = 0x02000000
	GenericAll           AccessMask = 0x10000000
	GenericExecute       AccessMask = 0x20000000
	GenericWrite         AccessMask = 0x40000000
	GenericRead          AccessMask = 0x80000000

	// FileAllAccess is what GENERIC_ALL maps to for files (Windows'
	// FILE_ALL_ACCESS, as smbd maps it).
	FileAllAccess AccessMask = 0x001F01FF
	// FileGenericRead, FileGenericWrite and FileGenericExecute are what the
	// GENERIC_* bits map to for files (Windows' FILE_GENERIC_* masks).
	FileGenericRead    AccessMask = 0x00120089
	FileGenericWrite   AccessMask = 0x00120116
	FileGenericExecute AccessMask = 0x001200A0
)

// FileAttributes are file attributes (MS-FSCC 2.6).
type FileAttributes uint32

// File attributes.
const (
	AttrReadonly          FileAttributes = 0x00000001
	AttrHidden            FileAttributes = 0x00000002
	AttrSystem            FileAttributes = 0x00000004
	AttrDirectory         FileAttributes = 0x00000010
	AttrArchive           FileAttributes = 0x00000020
	AttrNormal            FileAttributes = 0x00000080
	AttrTemporary         FileAttributes = 0x00000100
	AttrSparseFile        FileAttributes = 0x00000200
	AttrReparsePoint      FileAttributes = 0x00000400
	AttrCompressed        FileAttributes = 0x00000800
	AttrOffline           FileAttributes = 0x00001000
	AttrNotContentIndexed FileAttributes = 0x00002000
	AttrEncrypted         FileAttributes = 0x00004000
	AttrIntegrityStream   FileAttributes = 0x00008000
	AttrNoScrubData       FileAttributes = 0x00020000
)

// ShareAccess is the CREATE ShareAccess field (MS-SMB2 2.2.13).
type ShareAccess uint32

// Share access bits.
const (
	ShareRead   ShareAccess = 0x1
	ShareWrite  ShareAccess = 0x2
	ShareDelete ShareAccess = 0x4
)

// CreateDisposition is the CREATE CreateDisposition field (MS-SMB2 2.2.13).
type CreateDisposition uint32

// Create dispositions.
const (
	FileSupersede   CreateDisposition = 0
	FileOpen        CreateDisposition = 1
	FileCreate      CreateDisposition = 2
	FileOpenIf      CreateDisposition = 3
	FileOverwrite   CreateDisposition = 4
	FileOverwriteIf CreateDisposition = 5
)

// CreateOptions is the CREATE CreateOptions field (MS-SMB2 2.2.13).
type CreateOptions uint32

// Create options.
const (
	FileDirectoryFile           CreateOptions = 0x00000001
	FileWriteThrough            CreateOptions = 0x00000002
	FileSequentialOnly          CreateOptions = 0x00000004
	FileNoIntermediateBuffering CreateOptions = 0x00000008
	FileSynchronousIOAlert      CreateOptions = 0x00000010
	FileSynchronousIONonalert   CreateOptions = 0x00000020
	FileNonDirectoryFile        CreateOptions = 0x00000040
	FileCompleteIfOplocked      CreateOptions = 0x00000100
	FileNoEAKnowledge           CreateOptions = 0x00000200
	FileRandomAccess            CreateOptions = 0x00000800
	FileDeleteOnClose           CreateOptions = 0x00001000
	FileOpenByFileID            CreateOptions = 0x00002000
	FileOpenForBackupIntent     CreateOptions = 0x00004000
	FileNoCompression           CreateOptions = 0x00008000
	FileOpenRemoteInstance      CreateOptions = 0x00000400
	FileOpenRequiringOplock     CreateOptions = 0x00010000
	FileDisallowExclusive       CreateOptions = 0x00020000
	FileReserveOpfilter         CreateOptions = 0x00100000
	FileOpenReparsePoint        CreateOptions = 0x00200000
	FileOpenNoRecall            CreateOptions = 0x00400000
	FileOpenForFreeSpaceQuery   CreateOptions = 0x00800000
)

// CreateAction is the CREATE response CreateAction field (MS-SMB2 2.2.14).
type CreateAction uint32

// Create actions.
const (
	FileSuperseded  CreateAction = 0
	FileOpened      CreateAction = 1
	FileCreated     CreateAction = 2
	FileOverwritten CreateAction = 3
)

// Oplock levels (MS-SMB2 2.2.13). The server always grants OplockNone.
const (
	OplockNone      uint8 = 0x00
	OplockLevelII   uint8 = 0x01
	OplockExclusive uint8 = 0x08
	OplockBatch     uint8 = 0x09
	OplockLease     uint8 = 0xFF
)

// Impersonation levels (MS-SMB2 2.2.13). A value above ImpersonationDelegate
// is STATUS_BAD_IMPERSONATION_LEVEL (smb2.create.impersonation).
const (
	ImpersonationAnonymous      uint32 = 0
	ImpersonationIdentification uint32 = 1
	ImpersonationImpersonation  uint32 = 2
	ImpersonationDelegate       uint32 = 3
)

// CloseFlagPostQueryAttrib asks CLOSE to return the file's attributes
// (MS-SMB2 2.2.15).
const CloseFlagPostQueryAttrib uint16 = 0x0001

// READ and WRITE flags and channels (MS-SMB2 2.2.19, 2.2.21).
const (
	ReadFlagUnbuffered        uint8  = 0x01
	ReadFlagRequestCompressed uint8  = 0x02
	WriteFlagWriteThrough     uint32 = 0x00000001
	WriteFlagUnbuffered       uint32 = 0x00000002
	ChannelNone               uint32 = 0x00000000
)

// LOCK element flags (MS-SMB2 2.2.26.1).
const (
	LockFlagShared          uint32 = 0x00000001
	LockFlagExclusive       uint32 = 0x00000002
	LockFlagUnlock          uint32 = 0x00000004
	LockFlagFailImmediately uint32 = 0x00000010
)

// QUERY_DIRECTORY flags (MS-SMB2 2.2.33).
const (
	QueryDirRestartScans      uint8 = 0x01
	QueryDirReturnSingleEntry uint8 = 0x02
	QueryDirIndexSpecified    uint8 = 0x04
	QueryDirReopen            uint8 = 0x10
)

// CHANGE_NOTIFY flags (MS-SMB2 2.2.35).
const ChangeNotifyWatchTree uint16 = 0x0001

// InfoType is the QUERY_INFO/SET_INFO InfoType field (MS-SMB2 2.2.37).
type InfoType uint8

// Info types.
const (
	InfoTypeFile       InfoType = 0x01
	InfoTypeFilesystem InfoType = 0x02
	InfoTypeSecurity   InfoType = 0x03
	InfoTypeQuota      InfoType = 0x04
)

// Security information bits: the AdditionalInformation of a security
// QUERY_INFO/SET_INFO (MS-SMB2 2.2.37).
const (
	OwnerSecurityInformation uint32 = 0x00000001
	GroupSecurityInformation uint32 = 0x00000002
	DACLSecurityInformation  uint32 = 0x00000004
	SACLSecurityInformation  uint32 = 0x00000008
)

// FSCTL and IOCTL codes the server sees (MS-SMB2 2.2.31; MS-FSCC 2.3).
const (
	FsctlDFSGetReferrals           uint32 = 0x00060194
	FsctlDFSGetReferralsEx         uint32 = 0x000601B0
	FsctlPipeTransceive            uint32 = 0x0011C017
	FsctlPipePeek                  uint32 = 0x0011400C
	FsctlPipeWait                  uint32 = 0x00110018
	FsctlValidateNegotiateInfo     uint32 = 0x00140204
	FsctlQueryNetworkInterfaceInfo uint32 = 0x001401FC
	FsctlSrvEnumerateSnapshots     uint32 = 0x00144064
	FsctlSrvRequestResumeKey       uint32 = 0x00140078
	FsctlSrvCopychunk              uint32 = 0x001440F2
	FsctlSrvCopychunkWrite         uint32 = 0x001480F2
	FsctlCreateOrGetObjectID       uint32 = 0x000900C0
	FsctlSetSparse                 uint32 = 0x000900C4
	FsctlQueryAllocatedRanges      uint32 = 0x000940CF
	FsctlGetReparsePoint           uint32 = 0x000900A8
	FsctlSetZeroData               uint32 = 0x000980C8
	IoctlFlagIsFsctl               uint32 = 0x00000001
)
