package datalake

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// The Path operations on an account without a hierarchical namespace,
// over its blobs (internal/blob/flat_dfs.go says how). What needs a
// namespace (access control, rename) is 400
// HierarchicalNamespaceNotEnabled.

// flatErr turns the Blob domain's errors into the dfs endpoint's.
func flatErr(err error) error {
	e, ok := azerr.As(err)
	if !ok {
		return err
	}
	switch e.Code {
	case azerr.BlobNotFound:
		return azerr.New(azerr.PathNotFound)
	case azerr.BlobAlreadyExists:
		return azerr.New(azerr.PathAlreadyExists)
	}
	return fsErr(err)
}

func (r *req) blobRef(name string) blob.BlobRef {
	return blob.BlobRef{Account: r.Account, Container: r.filesystem, Blob: name}
}

// createPathFlat is Path - Create of a file or directory on a flat
// account: an empty block blob, the directory marked with hdi_isfolder.
// Access control headers need a namespace.
func (s *Service) createPathFlat(r *req) (server.Response, error) {
	ans := &answer{}
	for _, h := range []string{"x-ms-acl", "x-ms-owner", "x-ms-group", "x-ms-permissions", "x-ms-umask", "x-ms-expiry-option"} {
		if r.Header.Get(h) != "" {
			return server.Response{}, azerr.New(azerr.HierarchicalNamespaceNotEnabled)
		}
	}
	md, err := parseProperties(r.Header.Get(hProperties))
	if err != nil {
		return server.Response{}, err
	}
	props, err := parseContentProps(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	c, err := cond.Parse(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	dir := r.q.Get("resource") == "directory"
	if dir {
		md[blob.FolderMeta] = "true"
	}
	typ := blob.BlockBlob
	if bt := r.q.Get("blobtype"); bt != "" {
		// An append blob file, as on a hierarchical account (createPath).
		if dir || !strings.EqualFold(bt, "appendblob") {
			return server.Response{}, azerr.InvalidQuery("blobtype", bt)
		}
		typ = blob.AppendBlob
	}
	out, err := s.blob.PutBlob(r.Context(), blob.PutBlobInput{Call: r.call(), Ref: r.blobRef(r.path), Type: typ,
		Access: blob.Access{Cond: c}, NewBlob: blob.NewBlob{Metadata: md, HTTPHeaders: blob.HTTPHeaders{ContentType: props.Type,
			ContentEncoding: props.Encoding, ContentLanguage: props.Language, ContentDisposition: props.Disposition,
			CacheControl: props.CacheCtl, ContentMD5: props.MD5}}})
	if err != nil {
		return server.Response{}, flatErr(err)
	}
	h := ans
	setETag(h, out.ETag, out.LastModified)
	h.Set("X-Ms-Request-Server-Encrypted", "true")
	setKeySHA(h, r)
	h.Set("Content-Length", "0")
	return ans.done(http.StatusCreated)
}

// listPathsFlat is Path - List on a flat account (blob.ListFlatPaths):
// the blobs under the directory (all of them with recursive=true, else
// one level). beginFrom starts the listing at that name under the
// directory (List Blobs' startFrom, in the blob names' order), with the
// same limits as on a hierarchical account.
func (s *Service) listPathsFlat(r *req, recursive bool, max int) (server.Response, error) {
	ans := &answer{}
	prefix := strings.Trim(r.q.Get("directory"), "/")
	if prefix != "" {
		prefix += "/"
	}
	in := blob.ListFlatPathsInput{Call: r.call(), Ref: r.containerRef(), Prefix: prefix, Recursive: recursive, Marker: r.q.Get("continuation"), MaxResults: max}
	if from := r.q.Get("beginFrom"); from != "" {
		parts, err := ns.SplitPath(from)
		if err != nil || len(parts) == 0 || (!recursive && len(parts) > 1) {
			return server.Response{}, azerr.InvalidQuery("beginFrom", from)
		}
		in.StartFrom = prefix + strings.Join(parts, "/")
	}
	out, err := s.blob.ListFlatPaths(r.Context(), in)
	if err != nil {
		return server.Response{}, flatErr(err)
	}
	type flatPath struct {
		Name          string `json:"name"`
		IsDirectory   string `json:"isDirectory,omitempty"`
		ContentLength string `json:"contentLength"`
		LastModified  string `json:"lastModified,omitempty"`
		CreationTime  string `json:"creationTime,omitempty"`
		ETag          string `json:"etag,omitempty"`
	}
	body := struct {
		Paths []flatPath `json:"paths"`
	}{Paths: make([]flatPath, 0, len(out.Paths))}
	for _, p := range out.Paths {
		j := flatPath{Name: p.Name, ContentLength: strconv.FormatInt(p.Size, 10)}
		if !p.Implied {
			j.LastModified, j.CreationTime, j.ETag = wire.FormatHTTPDate(p.LastModified), fileTime(p.Created), unquote(p.ETag)
		}
		if p.Dir {
			j.IsDirectory = "true"
		}
		body.Paths = append(body.Paths, j)
	}
	if out.NextMarker != "" {
		ans.Set("X-Ms-Continuation", out.NextMarker)
	}
	return ans.json(http.StatusOK, body)
}

// deletePathFlat is Path - Delete on a flat account (blob.DeleteFlatPath):
// a file's blob, or a directory's marker and, with recursive=true, every
// blob under it.
func (s *Service) deletePathFlat(r *req, recursive bool, c cond.Conditions) (server.Response, error) {
	ans := &answer{}
	err := s.blob.DeleteFlatPath(r.Context(), blob.DeleteFlatPathInput{Call: r.call(), Ref: r.blobRef(r.path), Access: blob.Access{Cond: c}, Recursive: recursive})
	if err != nil {
		return server.Response{}, flatErr(err)
	}
	ans.Set("Content-Length", "0")
	return ans.done(http.StatusOK)
}

// getPathStatusFlat is Path - Get Properties with action=getStatus on a
// flat account: the blob's properties, x-ms-resource-type directory for
// a folder marker.
func (s *Service) getPathStatusFlat(r *req, c cond.Conditions) (server.Response, error) {
	ans := &answer{}
	if r.path == "" {
		// The filesystem itself: its root directory is the container.
		cp, err := s.blob.GetContainerProperties(r.Context(), blob.GetContainerPropertiesInput{Call: r.call(), Ref: r.containerRef()})
		if err != nil {
			return server.Response{}, fsErr(err)
		}
		if err := c.CheckRead(cp.ETag, cp.LastModified); err != nil {
			return server.Response{}, err
		}
		h := ans
		setETag(h, cp.ETag, cp.LastModified)
		h.Set("X-Ms-Resource-Type", "directory")
		h.Set("Content-Length", "0")
		return ans.done(http.StatusOK)
	}
	p, err := s.blob.GetBlobProperties(r.Context(), blob.GetBlobPropertiesInput{Call: r.call(), Ref: r.blobRef(r.path), Access: blob.Access{Cond: c}, NoKey: true})
	if err != nil {
		return server.Response{}, flatErr(err)
	}
	h := ans
	setETag(h, p.ETag, p.LastModified)
	typ, size := "file", p.Size
	md := p.Metadata
	if blob.IsFolder(md) {
		typ, size = "directory", 0
		md = map[string]string{}
		for k, v := range p.Metadata {
			if !strings.EqualFold(k, blob.FolderMeta) {
				md[k] = v
			}
		}
	}
	h.Set("X-Ms-Resource-Type", typ)
	if k := p.EncryptionKeySHA256; k != "" {
		// As on a hierarchical account (getPathStatus): the key is
		// named, the metadata written under it is not shown.
		h.Set("X-Ms-Server-Encrypted", "true")
		h.Set("X-Ms-Encryption-Key-Sha256", k)
	} else if v := formatProperties(md); v != "" {
		h.Set(hProperties, v)
	}
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	return ans.done(http.StatusOK)
}
