package azerr

// Codes the Blob endpoint of a hierarchical-namespace account sends for
// Blob features the namespace does not carry (Azure Blob Storage error
// codes; the messages as Azure sends them).
const (
	// BlobTypeNotSupported: "Page blob is not supported for this account
	// type." (400, as Azure answered Put Blob of a page blob,
	// Azure/azure-diagnostics-tools#78).
	BlobTypeNotSupported = "BlobTypeNotSupported"
	// FeatureNotYetSupportedForHierarchicalNamespaceAccounts: 409, as
	// Azure answered an append blob write on a hierarchical account
	// (Azure/azure-storage-node#632).
	FeatureNotYetSupportedForHierarchicalNamespaceAccounts = "FeatureNotYetSupportedForHierarchicalNamespaceAccounts"
	// LeaseIDMismatchWithPathOperation: a dfs write naming another lease
	// than the path's (azdatalake datalakeerror).
	LeaseIDMismatchWithPathOperation = "LeaseIdMismatchWithPathOperation"
)

func init() {
	for code, e := range map[string]entry{
		BlobTypeNotSupported: {400, "Page blob is not supported for this account type."},
		FeatureNotYetSupportedForHierarchicalNamespaceAccounts: {409, "This operation is not yet supported for hierarchical namespace accounts."},
		LeaseIDMismatchWithPathOperation:                       {412, "The lease ID specified did not match the lease ID for the path."},
	} {
		if _, dup := catalog[code]; dup {
			panic("azerr: hierarchical-namespace code also in the main catalog: " + code)
		}
		catalog[code] = e
	}
}
