package blobrest

// readUPN reads x-ms-upn into upn on a hierarchical account (version
// 2023-11-03: "Get Blob now supports the x-ms-upn request header for
// storage accounts with hierarchical namespace enabled"; Get Blob
// Properties reads it too); a flat account's reads do not look at it.
func (s *Service) readUPN(r *req, upn *bool) error {
	if !s.Hierarchical(r.Account) {
		return nil
	}
	v, err := parseBoolHeader(r.Header, "X-Ms-Upn", "x-ms-upn")
	*upn = v
	return err
}
