package azerr

// Customer-provided keys on Blob requests ("Provide an encryption key on
// a request to Blob storage"), with the service's messages as the
// azure-sdk-for-js recordings hold them.
const (
	BlobUsesCustomerSpecifiedEncryption       = "BlobUsesCustomerSpecifiedEncryption"
	BlobCustomerSpecifiedEncryptionMismatch   = "BlobCustomerSpecifiedEncryptionMismatch"
	BlobDoesNotUseCustomerSpecifiedEncryption = "BlobDoesNotUseCustomerSpecifiedEncryption"
)

func init() {
	catalog[BlobUsesCustomerSpecifiedEncryption] = entry{409, "The blob is encrypted with customer specified encryption, but it was not provided in the request."}
	catalog[BlobCustomerSpecifiedEncryptionMismatch] = entry{409, "The given customer specified encryption does not match the encryption used to encrypt the blob."}
	catalog[BlobDoesNotUseCustomerSpecifiedEncryption] = entry{409, "The blob is not encrypted with customer specified encryption, but one was provided in the request."}
}
