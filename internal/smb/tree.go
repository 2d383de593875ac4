package smb

import (
	"encoding/binary"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// Maximal access of trees (MS-SMB2 2.2.10 MaximalAccess, as smbd reports
// them).
const (
	diskMaximalAccess = smb2.FileAllAccess
	ipcMaximalAccess  = smb2.AccessMask(0x001F00A9)
)

// treeConnect connects the session to \\server\share (MS-SMB2 3.3.5.7):
// a share of the session's account (case-insensitive), or IPC$.
func (c *conn) treeConnect(r *request) ([]byte, error) {
	req, err := smb2.DecodeTreeConnectRequest(r.msg)
	if err != nil {
		return nil, err
	}
	_, name, ok := smb2.SplitSharePath(req.Path)
	if !ok {
		return nil, smb2.StatusBadNetworkName
	}
	s := r.sess
	if len(s.trees) >= maxTreesPerSession {
		return nil, smb2.StatusInsufficientResources
	}
	t := &tree{sess: s}
	resp := smb2.TreeConnectResponse{ShareType: smb2.ShareTypeDisk, ShareFlags: smb2.ShareFlagManualCaching | shareFlags(s), MaximalAccess: diskMaximalAccess}
	if strings.EqualFold(name, "IPC$") {
		t.ipc = true
		resp.ShareType, resp.MaximalAccess = smb2.ShareTypePipe, ipcMaximalAccess
	} else {
		t.share = strings.ToLower(name)
		exists, err := c.srv.vfs.ShareExists(c.ctx, s.account, t.share)
		if err != nil {
			return nil, err
		}
		if !exists {
			return nil, smb2.StatusBadNetworkName
		}
	}
	s.nextTree++
	for s.trees[s.nextTree] != nil || s.nextTree == 0 || s.nextTree == ^uint32(0) {
		s.nextTree++
	}
	t.id = s.nextTree
	s.trees[t.id] = t
	r.hdr.TreeID = t.id
	r.tree = t
	r.chain.tree = t
	return resp.Encode(), nil
}

// treeDisconnect closes the tree and every open on it (MS-SMB2 3.3.5.8),
// applying delete-on-close.
func (c *conn) treeDisconnect(r *request) ([]byte, error) {
	if _, err := smb2.DecodeTreeDisconnectRequest(r.msg); err != nil {
		return nil, err
	}
	t := r.tree
	for _, o := range c.opensOf(func(o *open) bool { return o.tree == t }) {
		c.closeOpen(o)
	}
	delete(t.sess.trees, t.id)
	r.chain.tree = nil
	return smb2.TreeDisconnectResponse{}.Encode(), nil
}

// ioctl answers IOCTL (MS-SMB2 3.3.5.15). Only
// FSCTL_VALIDATE_NEGOTIATE_INFO does something; the FSCTLs clients probe
// get the answers that make them fall back.
func (c *conn) ioctl(r *request) ([]byte, error) {
	req, err := smb2.DecodeIoctlRequest(r.msg)
	if err != nil {
		return nil, err
	}
	need := chargeNeeded(uint64(len(req.Input))+uint64(len(req.Output)), uint64(req.MaxOutputResponse)+uint64(req.MaxInputResponse))
	if err := c.checkCharge(r, need); err != nil {
		return nil, err
	}
	if req.Flags&smb2.IoctlFlagIsFsctl == 0 {
		return nil, smb2.StatusNotSupported
	}
	switch req.CtlCode {
	case smb2.FsctlValidateNegotiateInfo:
		return c.validateNegotiate(r, req)
	case smb2.FsctlDFSGetReferrals, smb2.FsctlDFSGetReferralsEx:
		return nil, smb2.StatusFSDriverRequired
	case smb2.FsctlQueryNetworkInterfaceInfo, smb2.FsctlPipeWait:
		return nil, smb2.StatusNotSupported
	}
	// The other FSCTLs act on an open.
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	switch req.CtlCode {
	case smb2.FsctlCreateOrGetObjectID:
		return c.objectID(r, o, req)
	case smb2.FsctlGetReparsePoint:
		return nil, smb2.StatusNotAReparsePoint
	case smb2.FsctlPipeTransceive, smb2.FsctlPipePeek, smb2.FsctlPipeWait:
		if !r.tree.ipc {
			return nil, smb2.StatusInvalidDeviceRequest
		}
		return nil, smb2.StatusNotSupported
	case smb2.FsctlSrvRequestResumeKey, smb2.FsctlSrvCopychunk, smb2.FsctlSrvCopychunkWrite:
		return nil, smb2.StatusNotSupported
	}
	return nil, smb2.StatusInvalidDeviceRequest
}

// objectID answers FSCTL_CREATE_OR_GET_OBJECT_ID (MS-FSCC 2.3.3) with a
// FILE_OBJECTID_BUFFER derived from the file and share ids: ObjectId,
// BirthVolumeId, BirthObjectId, DomainId (16 bytes each).
func (c *conn) objectID(r *request, o *open, req smb2.IoctlRequest) ([]byte, error) {
	const size = 64
	if req.MaxOutputResponse < size {
		return nil, smb2.StatusInvalidParameter
	}
	vol := volumeID(o.tree)
	out := make([]byte, size)
	binary.LittleEndian.PutUint64(out[0:], o.f.FileID)
	binary.LittleEndian.PutUint64(out[8:], vol)
	binary.LittleEndian.PutUint64(out[16:], vol)
	copy(out[32:48], out[0:16])
	return smb2.IoctlResponse{CtlCode: req.CtlCode, FileID: o.id, Output: out}.Encode(), nil
}

// validateNegotiate answers FSCTL_VALIDATE_NEGOTIATE_INFO (MS-SMB2
// 3.3.5.15.12): the client's NEGOTIATE as it claims it must match the one
// received, else the connection is dropped (a downgrade attack); the
// reply restates the server's NEGOTIATE response.
func (c *conn) validateNegotiate(r *request, req smb2.IoctlRequest) ([]byte, error) {
	if c.dialect == smb2.Dialect311 {
		return nil, drop("VALIDATE_NEGOTIATE_INFO on 3.1.1")
	}
	v, err := smb2.DecodeValidateNegotiateInfoRequest(req.Input)
	if err != nil {
		return nil, drop("bad VALIDATE_NEGOTIATE_INFO: %v", err)
	}
	if c.dialect == smb2.Dialect202 && len(c.negReq.Dialects) == 1 && c.negReq.ClientGUID == ([16]byte{}) {
		// Negotiated through SMB1: there is no SMB2 NEGOTIATE to compare.
	} else if !v.Matches(c.negReq) {
		return nil, drop("VALIDATE_NEGOTIATE_INFO does not match the NEGOTIATE")
	}
	out := smb2.ValidateNegotiateInfoResponse{
		Capabilities: c.negResp.Capabilities,
		GUID:         c.negResp.ServerGUID,
		SecurityMode: c.negResp.SecurityMode,
		Dialect:      c.negResp.DialectRevision,
	}.Encode()
	if uint32(len(out)) > req.MaxOutputResponse {
		return nil, smb2.StatusInvalidParameter
	}
	return smb2.IoctlResponse{CtlCode: req.CtlCode, FileID: req.FileID, Output: out}.Encode(), nil
}
