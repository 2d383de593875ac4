package azerr

// Data Lake Storage Gen2 codes, as the dfs endpoint sends them: the
// "Other Status Codes" lists of the Data Lake Storage Gen2 REST reference
// (Filesystem - Create, Path - Create, Path - Update, Path - Delete, ...)
// and the constants of the Go SDK's
// sdk/storage/azdatalake/datalakeerror/error_codes.go. Codes the Blob or
// File services share (ConditionNotMet, SourceConditionNotMet,
// DirectoryNotEmpty, LeaseIdMissing, ...) are in the main catalog.
const (
	FilesystemNotFound                     = "FilesystemNotFound"
	FilesystemAlreadyExists                = "FilesystemAlreadyExists"
	FilesystemBeingDeleted                 = "FilesystemBeingDeleted"
	PathNotFound                           = "PathNotFound"
	PathAlreadyExists                      = "PathAlreadyExists"
	PathConflict                           = "PathConflict"
	SourcePathNotFound                     = "SourcePathNotFound"
	RenameDestinationParentPathNotFound    = "RenameDestinationParentPathNotFound"
	InvalidDestinationPath                 = "InvalidDestinationPath"
	InvalidRenameSourcePath                = "InvalidRenameSourcePath"
	InvalidSourceOrDestinationResourceType = "InvalidSourceOrDestinationResourceType"
	InvalidFlushPosition                   = "InvalidFlushPosition"
	LeaseNotPresent                        = "LeaseNotPresent"
	// HierarchicalNamespaceNotEnabled is the dfs endpoint's 400 for an
	// operation that needs a hierarchical namespace on an account
	// without one ("This operation is only supported on a hierarchical
	// namespace account."; Hadoop's ABFS driver and Arrow's Azure
	// filesystem detect a flat account by this 400 to Get Access
	// Control).
	HierarchicalNamespaceNotEnabled = "HierarchicalNamespaceNotEnabled"
	// InvalidAccessControlList and InvalidPermission are the dfs
	// endpoint's 400s for a malformed x-ms-acl and x-ms-permissions. The
	// ACL code is spelled as the service spells it, "Inval…" without the
	// second i (azure-sdk-for-net's recorded DataLake tests
	// SetAccessControlAsync_Error and SetPermissionsAsync_Error).
	InvalidAccessControlList = "InvaldAccessControlList"
	InvalidPermission        = "InvalidPermission"
	// ExpiryNotSupportedForDirectory is the dfs endpoint's 400 to Path
	// Create of a directory with x-ms-expiry-option
	// (azure-sdk-for-js's recording "DataLakeDirectoryClient create with
	// absolute expiry": "Set Expiry is not supported for a directory").
	ExpiryNotSupportedForDirectory = "ExpiryNotSupportedForDirectory"
	// PathIsTooDeep is the 409 of a path with too many segments, as the
	// dfs endpoint sent it (recorded in the Microsoft Q&A question "Data
	// lake storage Gen2 - This operation is not permitted as the path is
	// too deep.").
	PathIsTooDeep = "PathIsTooDeep"
)

func init() {
	for code, e := range map[string]entry{
		FilesystemNotFound:                     {404, "The specified filesystem does not exist."},
		FilesystemAlreadyExists:                {409, "The specified filesystem already exists."},
		FilesystemBeingDeleted:                 {409, "The specified filesystem is being deleted."},
		PathNotFound:                           {404, "The specified path does not exist."},
		PathAlreadyExists:                      {409, "The specified path already exists."},
		PathConflict:                           {409, "The specified path, or an element of the path, exists and its resource type is invalid for this operation."},
		SourcePathNotFound:                     {404, "The source path for a rename operation does not exist."},
		RenameDestinationParentPathNotFound:    {404, "The parent directory of the destination path does not exist."},
		InvalidDestinationPath:                 {409, "The specified path, or an element of the path, exists and its resource type is invalid for this operation."},
		InvalidRenameSourcePath:                {409, "The source directory cannot be the same as the destination directory, nor can the destination be a subdirectory of the source directory."},
		InvalidSourceOrDestinationResourceType: {409, "The source and destination resource type must be identical."},
		InvalidFlushPosition:                   {400, "The uploaded data is not contiguous or the position query parameter value is not equal to the length of the file after appending the uploaded data."},
		LeaseNotPresent:                        {412, "There is currently no lease on the resource."},
		HierarchicalNamespaceNotEnabled:        {400, "This operation is only supported on a hierarchical namespace account."},
		InvalidAccessControlList:               {400, "The access control list value is invalid."},
		InvalidPermission:                      {400, "The permission value is invalid."},
		ExpiryNotSupportedForDirectory:         {400, "Set Expiry is not supported for a directory"},
		PathIsTooDeep:                          {409, "This operation is not permitted as the path is too deep."},
	} {
		if _, dup := catalog[code]; dup {
			panic("azerr: Data Lake code also in the main catalog: " + code)
		}
		catalog[code] = e
	}
}
