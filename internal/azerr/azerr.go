// Package azerr holds Cerulean's one error type and the catalog of Azure
// Storage error codes. The catalog is the only source of HTTP statuses for
// Azure errors: handlers return *Error values built with New, and the server
// renders them (XML for Blob/Queue/File, OData JSON for Table).
package azerr

import (
	"errors"
	"fmt"
)

// Error is an Azure Storage error: an HTTP status, an x-ms-error-code and a
// human message, plus optional detail elements rendered into the body
// (<AuthenticationErrorDetail>, <HeaderName>, <QueryParameterName>, ...).
type Error struct {
	Status  int
	Code    string
	Message string
	Details []Detail
	// Headers are extra response headers to send with the error.
	Headers map[string]string
}

// Detail is one extra element of the error body.
type Detail struct{ Name, Value string }

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// Is matches another *Error with the same code, so errors.Is(err,
// azerr.New(code)) works on wrapped errors.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// New returns the catalog error for code. An unknown code panics: the
// catalog must list every code the server emits.
func New(code string) *Error {
	c, ok := catalog[code]
	if !ok {
		panic("azerr: code not in catalog: " + code)
	}
	return &Error{Status: c.status, Code: code, Message: c.message}
}

// Newf returns the catalog error for code with a custom message.
func Newf(code, format string, args ...any) *Error {
	e := New(code)
	e.Message = fmt.Sprintf(format, args...)
	return e
}

// With returns e with a detail element appended.
func (e *Error) With(name, value string) *Error {
	e.Details = append(e.Details, Detail{name, value})
	return e
}

// WithStatus returns e with another HTTP status.
func (e *Error) WithStatus(status int) *Error {
	e.Status = status
	return e
}

// WithHeader returns e with an extra response header.
func (e *Error) WithHeader(name, value string) *Error {
	if e.Headers == nil {
		e.Headers = map[string]string{}
	}
	e.Headers[name] = value
	return e
}

// InvalidHeader is 400 InvalidHeaderValue naming the header.
func InvalidHeader(name, value string) *Error {
	return New(InvalidHeaderValue).With("HeaderName", name).With("HeaderValue", value)
}

// InvalidQuery is 400 InvalidQueryParameterValue naming the parameter.
func InvalidQuery(name, value string) *Error {
	return New(InvalidQueryParameterValue).With("QueryParameterName", name).With("QueryParameterValue", value)
}

// MissingHeader is 400 MissingRequiredHeader naming the header.
func MissingHeader(name string) *Error {
	return New(MissingRequiredHeader).With("HeaderName", name)
}

// As extracts an *Error from err.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Has reports whether err is an *Error with the given code.
func Has(err error, code string) bool {
	e, ok := As(err)
	return ok && e.Code == code
}

type entry struct {
	status  int
	message string
}

// Common, Blob, Queue, Table and File codes. Names are Azure's.
const (
	AccountIsDisabled                     = "AccountIsDisabled"
	AuthenticationFailed                  = "AuthenticationFailed"
	AuthorizationFailure                  = "AuthorizationFailure"
	AuthorizationPermissionMismatch       = "AuthorizationPermissionMismatch"
	AuthorizationResourceTypeMismatch     = "AuthorizationResourceTypeMismatch"
	AuthorizationServiceMismatch          = "AuthorizationServiceMismatch"
	AuthorizationProtocolMismatch         = "AuthorizationProtocolMismatch"
	AuthorizationSourceIPMismatch         = "AuthorizationSourceIPMismatch"
	ConditionHeadersNotSupported          = "ConditionHeadersNotSupported"
	ConditionNotMet                       = "ConditionNotMet"
	CorsPreflightFailure                  = "CorsPreflightFailure"
	EmptyMetadataKey                      = "EmptyMetadataKey"
	InsufficientAccountPermissions        = "InsufficientAccountPermissions"
	InternalError                         = "InternalError"
	InvalidAuthenticationInfo             = "InvalidAuthenticationInfo"
	InvalidHeaderValue                    = "InvalidHeaderValue"
	InvalidHTTPVerb                       = "InvalidHttpVerb"
	InvalidInput                          = "InvalidInput"
	InvalidMD5                            = "InvalidMd5"
	InvalidCRC64                          = "InvalidCrc64"
	InvalidMetadata                       = "InvalidMetadata"
	InvalidQueryParameterValue            = "InvalidQueryParameterValue"
	InvalidRange                          = "InvalidRange"
	InvalidResourceName                   = "InvalidResourceName"
	InvalidURI                            = "InvalidUri"
	InvalidXMLDocument                    = "InvalidXmlDocument"
	InvalidXMLNodeValue                   = "InvalidXmlNodeValue"
	MD5Mismatch                           = "Md5Mismatch"
	CRC64Mismatch                         = "Crc64Mismatch"
	BothCRC64AndMD5HeaderPresent          = "BothCrc64AndMd5HeaderPresent"
	BothCRC64AndMsMD5HeaderPresent        = "BothCrc64AndMsMd5HeaderPresent"
	MetadataTooLarge                      = "MetadataTooLarge"
	MissingContentLengthHeader            = "MissingContentLengthHeader"
	MissingRequiredQueryParameter         = "MissingRequiredQueryParameter"
	MissingRequiredHeader                 = "MissingRequiredHeader"
	MissingRequiredXMLNode                = "MissingRequiredXmlNode"
	MultipleConditionHeadersNotSupported  = "MultipleConditionHeadersNotSupported"
	OperationTimedOut                     = "OperationTimedOut"
	OutOfRangeInput                       = "OutOfRangeInput"
	OutOfRangeQueryParameterValue         = "OutOfRangeQueryParameterValue"
	RequestBodyTooLarge                   = "RequestBodyTooLarge"
	RequestURLFailedToParse               = "RequestUrlFailedToParse"
	ResourceAlreadyExists                 = "ResourceAlreadyExists"
	ResourceNotFound                      = "ResourceNotFound"
	ResourceTypeMismatch                  = "ResourceTypeMismatch"
	ServerBusy                            = "ServerBusy"
	UnsupportedHeader                     = "UnsupportedHeader"
	UnsupportedHTTPVerb                   = "UnsupportedHttpVerb"
	UnsupportedQueryParameter             = "UnsupportedQueryParameter"
	UnsupportedXMLNode                    = "UnsupportedXmlNode"
	UnsatisfiableCondition                = "UnsatisfiableCondition"
	AppendPositionConditionNotMet         = "AppendPositionConditionNotMet"
	BlobAlreadyExists                     = "BlobAlreadyExists"
	BlobIsSealed                          = "BlobIsSealed"
	NoAuthenticationInformation           = "NoAuthenticationInformation"
	BlobNotFound                          = "BlobNotFound"
	BlobOverwritten                       = "BlobOverwritten"
	BlobTierInadequateForContentLength    = "BlobTierInadequateForContentLength"
	BlockCountExceedsLimit                = "BlockCountExceedsLimit"
	BlockListTooLong                      = "BlockListTooLong"
	CannotChangeToLowerTier               = "CannotChangeToLowerTier"
	AccessTierNotSupportedForBlobType     = "AccessTierNotSupportedForBlobType"
	BlobArchived                          = "BlobArchived"
	AllBatchSubRequestsShouldBeSameAPI    = "AllBatchSubRequestsShouldBeSameApi"
	ExceedsMaxBatchRequestCount           = "ExceedsMaxBatchRequestCount"
	DuplicateTagNames                     = "DuplicateTagNames"
	EmptyTagName                          = "EmptyTagName"
	InvalidTag                            = "InvalidTag"
	TagsTooLarge                          = "TagsTooLarge"
	CannotVerifyCopySource                = "CannotVerifyCopySource"
	ContainerAlreadyExists                = "ContainerAlreadyExists"
	ContainerBeingDeleted                 = "ContainerBeingDeleted"
	ContainerNotFound                     = "ContainerNotFound"
	CopyAcrossAccountsNotSupported        = "CopyAcrossAccountsNotSupported"
	CopyIDMismatch                        = "CopyIdMismatch"
	InvalidBlobOrBlock                    = "InvalidBlobOrBlock"
	InvalidBlobTier                       = "InvalidBlobTier"
	InvalidBlobType                       = "InvalidBlobType"
	InvalidBlockID                        = "InvalidBlockId"
	InvalidBlockList                      = "InvalidBlockList"
	InvalidOperation                      = "InvalidOperation"
	InvalidPageRange                      = "InvalidPageRange"
	InvalidSourceBlobType                 = "InvalidSourceBlobType"
	InvalidSourceBlobURL                  = "InvalidSourceBlobUrl"
	LeaseAlreadyBroken                    = "LeaseAlreadyBroken"
	LeaseAlreadyPresent                   = "LeaseAlreadyPresent"
	LeaseIDMismatchWithBlobOperation      = "LeaseIdMismatchWithBlobOperation"
	LeaseIDMismatchWithContainerOperation = "LeaseIdMismatchWithContainerOperation"
	LeaseIDMismatchWithLeaseOperation     = "LeaseIdMismatchWithLeaseOperation"
	LeaseIDMismatchWithFileOperation      = "LeaseIdMismatchWithFileOperation"
	LeaseIDMissing                        = "LeaseIdMissing"
	LeaseIsBreakingAndCannotBeAcquired    = "LeaseIsBreakingAndCannotBeAcquired"
	LeaseIsBreakingAndCannotBeChanged     = "LeaseIsBreakingAndCannotBeChanged"
	LeaseIsBrokenAndCannotBeRenewed       = "LeaseIsBrokenAndCannotBeRenewed"
	LeaseLost                             = "LeaseLost"
	LeaseNotPresentWithBlobOperation      = "LeaseNotPresentWithBlobOperation"
	LeaseNotPresentWithContainerOperation = "LeaseNotPresentWithContainerOperation"
	LeaseNotPresentWithLeaseOperation     = "LeaseNotPresentWithLeaseOperation"
	LeaseNotPresentWithFileOperation      = "LeaseNotPresentWithFileOperation"
	MaxBlobSizeConditionNotMet            = "MaxBlobSizeConditionNotMet"
	NoPendingCopyOperation                = "NoPendingCopyOperation"
	PendingCopyOperation                  = "PendingCopyOperation"
	PreviousSnapshotCannotBeNewer         = "PreviousSnapshotCannotBeNewer"
	PreviousSnapshotNotFound              = "PreviousSnapshotNotFound"
	SequenceNumberConditionNotMet         = "SequenceNumberConditionNotMet"
	SequenceNumberIncrementTooLarge       = "SequenceNumberIncrementTooLarge"
	SnapshotsPresent                      = "SnapshotsPresent"
	SourceConditionNotMet                 = "SourceConditionNotMet"
	AccessTierChangeTimeConditionNotMet   = "AccessTierChangeTimeConditionNotMet"
	TargetConditionNotMet                 = "TargetConditionNotMet"
	InvalidMarker                         = "InvalidMarker"
	MessageNotFound                       = "MessageNotFound"
	MessageTooLarge                       = "MessageTooLarge"
	PopReceiptMismatch                    = "PopReceiptMismatch"
	QueueAlreadyExists                    = "QueueAlreadyExists"
	QueueBeingDeleted                     = "QueueBeingDeleted"
	QueueDisabled                         = "QueueDisabled"
	QueueNotEmpty                         = "QueueNotEmpty"
	QueueNotFound                         = "QueueNotFound"

	// Version-level immutability (internal/blob/immutability.go).
	BlobImmutableDueToLegalHold                    = "BlobImmutableDueToLegalHold"
	BlobImmutableDueToPolicy                       = "BlobImmutableDueToPolicy"
	ContainerImmutableStorageWithVersioningEnabled = "ContainerImmutableStorageWithVersioningEnabled"
	ImmutabilityPolicyDeleteOnLockedPolicy         = "ImmutabilityPolicyDeleteOnLockedPolicy"
	// Delete Container of a container with a container-level WORM
	// policy or legal hold (MicrosoftDocs/feedback#1844,
	// Azure/azure-powershell#26148).
	ContainerImmutabilityPolicyLocked = "ContainerImmutabilityPolicyLocked"
	ContainerHasLegalHold             = "ContainerHasLegalHold"
)

// Table service codes.
const (
	AtomFormatNotSupported                  = "AtomFormatNotSupported"
	CommandsInBatchActOnDifferentPartitions = "CommandsInBatchActOnDifferentPartitions"
	DuplicatePropertiesSpecified            = "DuplicatePropertiesSpecified"
	EntityAlreadyExists                     = "EntityAlreadyExists"
	EntityTooLarge                          = "EntityTooLarge"
	InvalidDuplicateRow                     = "InvalidDuplicateRow"
	InvalidValueType                        = "InvalidValueType"
	JSONFormatNotSupported                  = "JsonFormatNotSupported"
	MethodNotAllowed                        = "MethodNotAllowed"
	NotImplemented                          = "NotImplemented"
	PropertiesNeedValue                     = "PropertiesNeedValue"
	PropertyNameInvalid                     = "PropertyNameInvalid"
	PropertyNameTooLong                     = "PropertyNameTooLong"
	PropertyValueTooLarge                   = "PropertyValueTooLarge"
	TableAlreadyExists                      = "TableAlreadyExists"
	TableBeingDeleted                       = "TableBeingDeleted"
	TableNotFound                           = "TableNotFound"
	TooManyProperties                       = "TooManyProperties"
	UpdateConditionNotSatisfied             = "UpdateConditionNotSatisfied"
	XMethodIncorrectCount                   = "XMethodIncorrectCount"
	XMethodIncorrectValue                   = "XMethodIncorrectValue"
	XMethodNotUsingPost                     = "XMethodNotUsingPost"
)

// File service codes.
const (
	CannotDeleteFileOrDirectory        = "CannotDeleteFileOrDirectory"
	DeletePending                      = "DeletePending"
	DirectoryNotEmpty                  = "DirectoryNotEmpty"
	FileInvalidPermission              = "FileInvalidPermission"
	FileInvalidPermissionKey           = "FileInvalidPermissionKey"
	FileLockConflict                   = "FileLockConflict"
	InvalidFileOrDirectoryPathName     = "InvalidFileOrDirectoryPathName"
	ParentNotFound                     = "ParentNotFound"
	ReadOnlyAttribute                  = "ReadOnlyAttribute"
	ShareAlreadyExists                 = "ShareAlreadyExists"
	ShareBeingDeleted                  = "ShareBeingDeleted"
	ShareHasSnapshots                  = "ShareHasSnapshots"
	ShareNotFound                      = "ShareNotFound"
	ShareSnapshotCountExceeded         = "ShareSnapshotCountExceeded"
	ShareSnapshotNotFound              = "ShareSnapshotNotFound"
	ShareSnapshotOperationNotSupported = "ShareSnapshotOperationNotSupported"
	ShareSizeLimitReached              = "ShareSizeLimitReached"
	SharingViolation                   = "SharingViolation"
	SMBDeletePending                   = "SMBDeletePending"
	LeaseIDMismatchWithShareOperation  = "LeaseIdMismatchWithShareOperation"
	LeaseNotPresentWithShareOperation  = "LeaseNotPresentWithShareOperation"
	InvalidFileOrDirectoryName         = "InvalidFileOrDirectoryName"
)

// MemoryExtentStoreAtSizeLimit is not an Azure code (Azure has no such
// limit): it is the one Azurite answers, with 409, when a write would take
// its --inMemoryPersistence extent store past --extentMemoryLimit
// (Azure/Azurite src/common/persistence/MemoryExtentStore.ts,
// appendExtent; docs/designs/2023-10-in-memory-persistence.md). Cerulean's
// --in-memory mode answers the same, so tools written against Azurite's
// in-memory mode see the error they know; 409 is not retried by the SDKs.
const MemoryExtentStoreAtSizeLimit = "MemoryExtentStoreAtSizeLimit"

var catalog = map[string]entry{
	MemoryExtentStoreAtSizeLimit:          {409, "Cannot add an extent chunk to the in-memory store. The size limit will be exceeded."},
	AccountIsDisabled:                     {403, "The specified account is disabled."},
	AuthenticationFailed:                  {403, "Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature."},
	AuthorizationFailure:                  {403, "This request is not authorized to perform this operation."},
	AuthorizationPermissionMismatch:       {403, "This request is not authorized to perform this operation using this permission."},
	AuthorizationResourceTypeMismatch:     {403, "This request is not authorized to perform this operation using this resource type."},
	AuthorizationServiceMismatch:          {403, "This request is not authorized to perform this operation using this service."},
	AuthorizationProtocolMismatch:         {403, "This request is not authorized to perform this operation using this protocol."},
	AuthorizationSourceIPMismatch:         {403, "This request is not authorized to perform this operation using this source IP."},
	ConditionHeadersNotSupported:          {400, "Condition headers are not supported."},
	ConditionNotMet:                       {412, "The condition specified using HTTP conditional header(s) is not met."},
	CorsPreflightFailure:                  {403, "CORS not enabled or no matching rule found for this request."},
	EmptyMetadataKey:                      {400, "The key for one of the metadata key-value pairs is empty."},
	InsufficientAccountPermissions:        {403, "The account being accessed does not have sufficient permissions to execute this operation."},
	InternalError:                         {500, "The server encountered an internal error. Please retry the request."},
	InvalidAuthenticationInfo:             {400, "Authentication information is not given in the correct format. Check the value of Authorization header."},
	InvalidHeaderValue:                    {400, "The value for one of the HTTP headers is not in the correct format."},
	InvalidHTTPVerb:                       {400, "The HTTP verb specified is invalid - it is not recognized by the server."},
	InvalidInput:                          {400, "One of the request inputs is not valid."},
	InvalidMD5:                            {400, "The MD5 value specified in the request is invalid. The MD5 value must be 128 bits and Base64-encoded."},
	InvalidCRC64:                          {400, "The CRC64 value specified in the request is invalid. The CRC64 value must be 64 bits and Base64-encoded."},
	InvalidMetadata:                       {400, "The metadata specified is invalid. It has characters that are not permitted."},
	InvalidQueryParameterValue:            {400, "Value for one of the query parameters specified in the request URI is invalid."},
	InvalidRange:                          {416, "The range specified is invalid for the current size of the resource."},
	InvalidResourceName:                   {400, "The specified resource name contains invalid characters."},
	InvalidURI:                            {400, "The requested URI does not represent any resource on the server."},
	InvalidXMLDocument:                    {400, "XML specified is not syntactically valid."},
	InvalidXMLNodeValue:                   {400, "The value for one of the XML nodes is not in the correct format."},
	MD5Mismatch:                           {400, "The MD5 value specified in the request did not match with the MD5 value calculated by the server."},
	CRC64Mismatch:                         {400, "The CRC64 value specified in the request did not match with the CRC64 value calculated by the server."},
	BothCRC64AndMD5HeaderPresent:          {400, "Both x-ms-content-crc64 header and Content-MD5 header are present."},
	BothCRC64AndMsMD5HeaderPresent:        {400, "Both x-ms-content-crc64 header and x-ms-blob-content-md5 header are present."},
	MetadataTooLarge:                      {400, "The size of the specified metadata exceeds the maximum size permitted."},
	MissingContentLengthHeader:            {411, "The Content-Length header was not specified."},
	MissingRequiredQueryParameter:         {400, "A query parameter that's mandatory for this request is not specified."},
	MissingRequiredHeader:                 {400, "An HTTP header that's mandatory for this request is not specified."},
	MissingRequiredXMLNode:                {400, "An XML node that's mandatory for this request is not specified."},
	MultipleConditionHeadersNotSupported:  {400, "Multiple condition headers are not supported."},
	OperationTimedOut:                     {500, "The operation could not be completed within the permitted time."},
	OutOfRangeInput:                       {400, "One of the request inputs is out of range."},
	OutOfRangeQueryParameterValue:         {400, "One of the query parameters specified in the request URI is outside the permissible range."},
	RequestBodyTooLarge:                   {413, "The request body is too large and exceeds the maximum permissible limit."},
	RequestURLFailedToParse:               {400, "The url in the request could not be parsed."},
	ResourceAlreadyExists:                 {409, "The specified resource already exists."},
	ResourceNotFound:                      {404, "The specified resource does not exist."},
	ResourceTypeMismatch:                  {409, "The specified resource type does not match the type of the existing resource."},
	ServerBusy:                            {503, "The server is currently unable to receive requests. Please retry your request."},
	UnsupportedHeader:                     {400, "One of the HTTP headers specified in the request is not supported."},
	UnsupportedHTTPVerb:                   {405, "The resource doesn't support the specified HTTP verb."},
	UnsupportedQueryParameter:             {400, "One of the query parameters specified in the request URI is not supported."},
	UnsupportedXMLNode:                    {400, "One of the XML nodes specified in the request body is not supported."},
	UnsatisfiableCondition:                {400, "The request includes an unsatisfiable condition for this operation."},
	AppendPositionConditionNotMet:         {412, "The append position condition specified was not met."},
	BlobAlreadyExists:                     {409, "The specified blob already exists."},
	BlobIsSealed:                          {409, "The specified blob is sealed, and its contents can't be modified unless the blob is re-created after a delete."}, // Append Blob Seal, Remarks
	NoAuthenticationInformation:           {401, "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."},
	BlobNotFound:                          {404, "The specified blob does not exist."},
	BlobOverwritten:                       {409, "The blob has been recreated since the previous snapshot was taken."},
	BlobTierInadequateForContentLength:    {409, "The specified blob tier size limit cannot be less than content length."},
	BlockCountExceedsLimit:                {409, "The committed block count cannot exceed the maximum limit of 50,000 blocks."},
	BlockListTooLong:                      {400, "The block list may not contain more than 50,000 blocks."},
	CannotChangeToLowerTier:               {409, "A higher blob tier has already been explicitly set."},
	CannotVerifyCopySource:                {404, "Could not verify the copy source within the specified time."},
	ContainerAlreadyExists:                {409, "The specified container already exists."},
	ContainerBeingDeleted:                 {409, "The specified container is being deleted."},
	ContainerNotFound:                     {404, "The specified container does not exist."},
	AccessTierNotSupportedForBlobType:     {400, "The access tier is not supported for this blob type."},
	BlobArchived:                          {409, "This operation is not permitted on an archived blob."},
	AllBatchSubRequestsShouldBeSameAPI:    {400, "All batch subrequests should be the same api."},
	ExceedsMaxBatchRequestCount:           {400, "The batch operation exceeds maximum number of allowed subrequests."},
	DuplicateTagNames:                     {400, "The tags specified contain duplicate names."},
	EmptyTagName:                          {400, "The name of one of the tag key-value pairs is empty."},
	InvalidTag:                            {400, "The tags specified are invalid. It contains characters that are not permitted."},
	TagsTooLarge:                          {400, "The tags specified exceed the maximum permissible limit."},
	CopyAcrossAccountsNotSupported:        {400, "The copy source account and destination account must be the same."},
	CopyIDMismatch:                        {409, "The specified copy ID did not match the copy ID for the pending copy operation."},
	InvalidBlobOrBlock:                    {400, "The specified blob or block content is invalid."},
	InvalidBlobTier:                       {400, "The specified blob tier is invalid."},
	InvalidBlobType:                       {409, "The blob type is invalid for this operation."},
	InvalidBlockID:                        {400, "The specified block ID is invalid. The block ID must be Base64-encoded."},
	InvalidBlockList:                      {400, "The specified block list is invalid."},
	InvalidOperation:                      {400, "Invalid operation against a blob snapshot."},
	InvalidPageRange:                      {416, "The page range specified is invalid."},
	InvalidSourceBlobType:                 {409, "The copy source blob type is invalid for this operation."},
	InvalidSourceBlobURL:                  {409, "The source URL for the copy operation is not valid."},
	LeaseAlreadyBroken:                    {409, "The lease has already been broken and cannot be broken again."},
	LeaseAlreadyPresent:                   {409, "There is already a lease present."},
	LeaseIDMismatchWithBlobOperation:      {412, "The lease ID specified did not match the lease ID for the blob."},
	LeaseIDMismatchWithContainerOperation: {412, "The lease ID specified did not match the lease ID for the container."},
	LeaseIDMismatchWithLeaseOperation:     {409, "The lease ID specified did not match the lease ID for the blob/container."},
	LeaseIDMismatchWithFileOperation:      {412, "The lease ID specified did not match the lease ID for the file."},
	LeaseIDMissing:                        {412, "There is currently a lease on the resource and no lease ID was specified in the request."},
	LeaseIsBreakingAndCannotBeAcquired:    {409, "The lease ID matched, but the lease is currently in breaking state and cannot be acquired until it is broken."},
	LeaseIsBreakingAndCannotBeChanged:     {409, "The lease ID matched, but the lease is currently in breaking state and cannot be changed."},
	LeaseIsBrokenAndCannotBeRenewed:       {409, "The lease ID matched, but the lease has been broken explicitly and cannot be renewed."},
	LeaseLost:                             {412, "A lease ID was specified, but the lease for the resource has expired."},
	LeaseNotPresentWithBlobOperation:      {412, "There is currently no lease on the blob."},
	LeaseNotPresentWithContainerOperation: {412, "There is currently no lease on the container."},
	LeaseNotPresentWithLeaseOperation:     {409, "There is currently no lease on the resource."},
	LeaseNotPresentWithFileOperation:      {412, "There is currently no lease on the file."},
	MaxBlobSizeConditionNotMet:            {412, "The max blob size condition specified was not met."},
	NoPendingCopyOperation:                {409, "There is currently no pending copy operation."},
	PendingCopyOperation:                  {409, "There is currently a pending copy operation."},
	PreviousSnapshotCannotBeNewer:         {400, "The prevsnapshot query parameter value cannot be newer than snapshot query parameter value."},
	PreviousSnapshotNotFound:              {409, "The previous snapshot is not found."},
	SequenceNumberConditionNotMet:         {412, "The sequence number condition specified was not met."},
	SequenceNumberIncrementTooLarge:       {409, "The sequence number increment cannot be performed because it would result in overflow of the sequence number."},
	SnapshotsPresent:                      {409, "This operation is not permitted because the blob has snapshots."},
	SourceConditionNotMet:                 {412, "The source condition specified using HTTP conditional header(s) is not met."},
	AccessTierChangeTimeConditionNotMet:   {412, "The access tier change time condition specified using HTTP conditional header(s) is not met."},
	TargetConditionNotMet:                 {412, "The target condition specified using HTTP conditional header(s) is not met."},
	InvalidMarker:                         {400, "The specified marker is invalid."},
	MessageNotFound:                       {404, "The specified message does not exist."},
	MessageTooLarge:                       {400, "The message exceeds the maximum allowed size."},
	PopReceiptMismatch:                    {400, "The specified pop receipt did not match the pop receipt for a dequeued message."},
	QueueAlreadyExists:                    {409, "The specified queue already exists."},
	QueueBeingDeleted:                     {409, "The specified queue is being deleted."},
	QueueDisabled:                         {409, "The specified queue has been disabled by the administrator."},
	QueueNotEmpty:                         {409, "The specified queue is not empty."},
	QueueNotFound:                         {404, "The specified queue does not exist."},

	// Table service.
	AtomFormatNotSupported:                  {415, "Atom format is not supported."},
	CommandsInBatchActOnDifferentPartitions: {400, "All commands in a batch must operate on same entity group."},
	DuplicatePropertiesSpecified:            {400, "A property is specified more than one time."},
	EntityAlreadyExists:                     {409, "The specified entity already exists."},
	EntityTooLarge:                          {400, "The entity is larger than the maximum size permitted."},
	InvalidDuplicateRow:                     {400, "A command with RowKey is already present in the batch. An entity can appear only once in a batch."},
	InvalidValueType:                        {400, "The value specified is invalid."},
	JSONFormatNotSupported:                  {415, "JSON format is not supported."},
	MethodNotAllowed:                        {405, "The requested method is not allowed on the specified resource."},
	NotImplemented:                          {501, "The requested operation is not implemented on the specified resource."},
	PropertiesNeedValue:                     {400, "Values have not been specified for all properties in the entity."},
	PropertyNameInvalid:                     {400, "The property name is invalid."},
	PropertyNameTooLong:                     {400, "The property name exceeds the maximum allowed length."},
	PropertyValueTooLarge:                   {400, "The property value is larger than the maximum size permitted."},
	TableAlreadyExists:                      {409, "The table specified already exists."},
	TableBeingDeleted:                       {409, "The specified table is being deleted. Try operation later."},
	TableNotFound:                           {404, "The table specified does not exist."},
	TooManyProperties:                       {400, "The entity contains more properties than allowed."},
	UpdateConditionNotSatisfied:             {412, "The update condition specified in the request was not satisfied."},
	XMethodIncorrectCount:                   {400, "More than one X-HTTP-Method is specified."},
	XMethodIncorrectValue:                   {400, "The specified X-HTTP-Method is invalid."},
	XMethodNotUsingPost:                     {400, "The request uses X-HTTP-Method with an HTTP verb other than POST."},

	// File service.
	CannotDeleteFileOrDirectory:        {409, "The file or directory could not be deleted because it is in use by an SMB client."},
	DeletePending:                      {409, "The specified resource is marked for deletion by an SMB client."},
	DirectoryNotEmpty:                  {409, "The specified directory is not empty."},
	FileInvalidPermission:              {400, "The specified file permission is not valid."},
	FileInvalidPermissionKey:           {400, "The specified file permission key does not exist in the share."},
	FileLockConflict:                   {409, "A portion of the specified file is locked by an SMB client."},
	InvalidFileOrDirectoryPathName:     {400, "The specified path name is not valid."},
	InvalidFileOrDirectoryName:         {400, "The specified file or directory name is not valid."},
	ParentNotFound:                     {404, "The specified parent path does not exist."},
	ReadOnlyAttribute:                  {409, "The specified resource is read-only and cannot be modified at this time."},
	ShareAlreadyExists:                 {409, "The specified share already exists."},
	ShareBeingDeleted:                  {409, "The specified share is being deleted. Try operation later."},
	ShareHasSnapshots:                  {409, "The share has snapshots and the operation requires no snapshots."},
	ShareNotFound:                      {404, "The specified share does not exist."},
	ShareSnapshotCountExceeded:         {409, "The total number of snapshots for the share is over the limit."},
	ShareSnapshotNotFound:              {404, "The specified share snapshot does not exist."},
	ShareSnapshotOperationNotSupported: {400, "The operation is not supported on a share snapshot."},
	ShareSizeLimitReached:              {403, "The specified share is full."},
	SharingViolation:                   {409, "The specified resource may be in use by an SMB client."},
	SMBDeletePending:                   {409, "The specified resource is marked for deletion by an SMB client."},
	LeaseIDMismatchWithShareOperation:  {412, "The lease ID specified did not match the lease ID for the share."},
	LeaseNotPresentWithShareOperation:  {412, "There is currently no lease on the share."},

	// Version-level immutability.
	BlobImmutableDueToLegalHold:                    {409, "This operation is not permitted as the blob is immutable due to one or more legal holds."},
	BlobImmutableDueToPolicy:                       {409, "This operation is not permitted as the blob is immutable due to a policy."},
	ContainerImmutableStorageWithVersioningEnabled: {409, "The requested operation is not allowed as the container has a immutable storage with versioning enabled."},
	ImmutabilityPolicyDeleteOnLockedPolicy:         {409, "This operation is not permitted as the immutability policy is locked."},
	ContainerImmutabilityPolicyLocked:              {409, "The requested operation is not allowed as the container has a locked immutability policy."},
	ContainerHasLegalHold:                          {409, "The requested operation is not allowed as the container has one or more legal holds."},
}

// Status returns the catalog status for code, or 500 if unknown.
func Status(code string) int {
	if c, ok := catalog[code]; ok {
		return c.status
	}
	return 500 // InternalError
}
