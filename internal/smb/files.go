package smb

import (
	"context"
	"errors"
	"math"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// modeBits are the CreateOptions bits FileModeInformation reports
// (MS-FSCC 2.4.26).
const modeBits = uint32(smb2.FileWriteThrough | smb2.FileSequentialOnly | smb2.FileNoIntermediateBuffering |
	smb2.FileSynchronousIOAlert | smb2.FileSynchronousIONonalert | smb2.FileDeleteOnClose)

// create answers CREATE (MS-SMB2 3.3.5.9).
func (c *conn) create(r *request) ([]byte, error) {
	req, err := smb2.DecodeCreateRequest(r.msg)
	if err != nil {
		return nil, err
	}
	if r.tree.ipc {
		// No named pipes are served (srvsvc would answer smbclient -L).
		return nil, smb2.StatusObjectNameNotFound
	}
	if req.ImpersonationLevel > smb2.ImpersonationDelegate {
		return nil, smb2.StatusBadImpersonationLevel
	}
	if req.CreateOptions&(smb2.FileOpenByFileID|smb2.FileReserveOpfilter) != 0 {
		return nil, smb2.StatusNotSupported
	}
	comps, err := splitPath(req.Name, false)
	if err != nil {
		return nil, err
	}
	if len(comps) > 0 && mayCreate(req.CreateDisposition) {
		if err := newName(comps[len(comps)-1]); err != nil {
			return nil, err
		}
	}
	var mxac, qfid bool
	for _, cc := range req.Contexts {
		switch cc.Name {
		case smb2.CreateContextEAs:
			return nil, smb2.StatusEASNotSupported
		case smb2.CreateContextTimewarp, smb2.CreateContextDurableReconn, smb2.CreateContextDurableReconn2:
			return nil, smb2.StatusObjectNameNotFound
		case smb2.CreateContextMaximalAccess:
			mxac = true
		case smb2.CreateContextQueryOnDiskID:
			qfid = true
		}
	}
	if len(c.opens) >= maxOpensPerConn {
		return nil, smb2.StatusInsufficientResources
	}
	fo, err := c.srv.vfs.Open(c.ctx, file.OpenRequest{
		Account: r.sess.account, Share: r.tree.share, Path: comps,
		DesiredAccess: uint32(req.DesiredAccess), ShareAccess: uint32(req.ShareAccess),
		Disposition: file.Disposition(req.CreateDisposition), Options: uint32(req.CreateOptions),
		Attributes: file.Attributes(req.FileAttributes),
		SessionID:  r.sess.vfsID, ClientAddr: c.remote,
	})
	if err != nil {
		return nil, err
	}
	c.nextVolatile++
	o := &open{
		id: smb2.FileID{Persistent: fo.HandleNum, Volatile: c.nextVolatile},
		f:  fo, sess: r.sess, tree: r.tree,
		mode: uint32(req.CreateOptions) & modeBits,
	}
	c.opens[o.id.Volatile] = o
	r.chain.fileID = &o.id
	in := fo.Info
	switch fo.Action {
	case file.ActionCreated:
		c.reportChange(o, comps, smb2.FileActionAdded, nameFilter(fo.Dir))
	case file.ActionOverwritten, file.ActionSuperseded:
		c.reportChange(o, comps, smb2.FileActionModified,
			smb2.FileNotifyChangeAttributes|smb2.FileNotifyChangeSize|smb2.FileNotifyChangeLastWrite)
	}
	resp := smb2.CreateResponse{
		OplockLevel:  smb2.OplockNone,
		CreateAction: smb2.CreateAction(fo.Action),
		Attrs:        netOpen(in),
		FileID:       o.id,
	}
	if mxac {
		ro := !in.Dir && in.Attributes&file.AttrReadOnly != 0
		resp.Contexts = append(resp.Contexts, smb2.MaximalAccessContext(smb2.StatusSuccess, smb2.AccessMask(file.MapAccess(file.AccessMaximumAllowed, ro))))
	}
	if qfid {
		resp.Contexts = append(resp.Contexts, smb2.QueryOnDiskIDContext(in.FileID, volumeID(r.tree)))
	}
	return resp.Encode(), nil
}

// closeOpen closes o in the store (applying delete-on-close) and forgets
// it, completing its pending CHANGE_NOTIFYs; errors are logged (tree
// disconnect and logoff cannot report them).
func (c *conn) closeOpen(o *open) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if _, err := c.release(ctx, o); err != nil && !errors.Is(err, file.ErrFileClosed) && !errors.Is(err, file.ErrDirectoryNotEmpty) {
		c.log.Warn("closing an SMB handle failed", "err", err)
	}
}

// release is every close of o: it leaves the connection's table, its
// pending CHANGE_NOTIFYs complete and its watch goes, the store closes
// the handle (waking blocked locks), and watchers of its directory hear
// of the close's effects.
func (c *conn) release(ctx context.Context, o *open) (file.Info, error) {
	delete(c.opens, o.id.Volatile)
	c.finishNotifies(o, smb2.StatusNotifyCleanup)
	c.unwatch(o)
	p := c.watchedPath(o)
	in, err := c.srv.vfs.Close(ctx, o.f)
	c.locksReleased()
	if err == nil {
		c.reportClosed(o, p, in)
	}
	return in, err
}

// closeFile answers CLOSE (MS-SMB2 3.3.5.10).
func (c *conn) closeFile(r *request) ([]byte, error) {
	req, err := smb2.DecodeCloseRequest(r.msg)
	if err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	in, err := c.release(c.ctx, o)
	if err != nil {
		return nil, err
	}
	resp := smb2.CloseResponse{}
	if req.Flags&smb2.CloseFlagPostQueryAttrib != 0 {
		resp = smb2.CloseResponse{Flags: smb2.CloseFlagPostQueryAttrib, Attrs: netOpen(in)}
	}
	return resp.Encode(), nil
}

// flush answers FLUSH (MS-SMB2 3.3.5.11): data is durable once a WRITE
// returns, so this only checks the open.
func (c *conn) flush(r *request) ([]byte, error) {
	req, err := smb2.DecodeFlushRequest(r.msg)
	if err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	if o.f.GrantedAccess&(file.AccessWriteData|file.AccessAppendData) == 0 {
		return nil, smb2.StatusAccessDenied
	}
	if _, err := c.srv.vfs.Info(c.ctx, o.f); err != nil {
		return nil, err
	}
	return smb2.FlushResponse{}.Encode(), nil
}

// read answers READ (MS-SMB2 3.3.5.12).
func (c *conn) read(r *request) ([]byte, error) {
	req, err := smb2.DecodeReadRequest(r.msg)
	if err != nil {
		return nil, err
	}
	if err := c.checkCharge(r, chargeNeeded(0, uint64(req.Length))); err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	if o.f.Dir {
		return nil, smb2.StatusInvalidDeviceRequest
	}
	// Offsets are signed 64-bit in NTFS; a range past 2^63-1 is invalid
	// (smb2.rw.invalid).
	if int(req.Length) > c.maxIO || req.Offset > math.MaxInt64 || req.Offset+uint64(req.Length) > math.MaxInt64 {
		return nil, smb2.StatusInvalidParameter
	}
	if req.Length == 0 {
		// A zero-length read succeeds anywhere, even past the end of
		// file, unless it asks for a minimum (smb2.read.eof).
		if req.MinimumCount > 0 {
			return nil, smb2.StatusEndOfFile
		}
		if o.f.GrantedAccess&(file.AccessReadData|file.AccessExecute) == 0 {
			return nil, smb2.StatusAccessDenied
		}
		return smb2.ReadResponse{}.Encode(), nil
	}
	data, err := c.srv.vfs.Read(c.ctx, o.f, int64(req.Offset), int(req.Length))
	if err != nil {
		return nil, err
	}
	if uint64(len(data)) < uint64(req.MinimumCount) {
		return nil, smb2.StatusEndOfFile
	}
	o.position = int64(req.Offset) + int64(len(data))
	resp := smb2.ReadResponse{Data: data}
	if len(data) == 0 {
		return resp.Encode(), nil
	}
	r.data = data
	return resp.EncodePrefix(), nil
}

// write answers WRITE (MS-SMB2 3.3.5.13). Offset all-ones appends.
func (c *conn) write(r *request) ([]byte, error) {
	req, err := smb2.DecodeWriteRequest(r.msg)
	if err != nil {
		return nil, err
	}
	if err := c.checkCharge(r, chargeNeeded(uint64(len(req.Data)), 0)); err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	if o.f.Dir {
		return nil, smb2.StatusInvalidDeviceRequest
	}
	if len(req.Data) > c.maxIO {
		return nil, smb2.StatusInvalidParameter
	}
	off := int64(req.Offset)
	appendOnly := o.f.GrantedAccess&file.AccessAppendData != 0 && o.f.GrantedAccess&file.AccessWriteData == 0
	switch {
	case req.Offset == math.MaxUint64 && appendOnly:
		// FILE_WRITE_TO_END_OF_FILE, for an append-only open (MS-FSA
		// 2.1.5.4); otherwise an invalid offset like the others.
		off = file.WriteToEOF
	case len(req.Data) == 0 && req.Offset > math.MaxInt64,
		len(req.Data) > 0 && (req.Offset > maxNTFSFileSize || req.Offset+uint64(len(req.Data)) > maxNTFSFileSize):
		// Past NTFS's largest file: invalid (smb2.rw.invalid), while
		// a write past the share's largest file is DISK_FULL (VFS).
		return nil, smb2.StatusInvalidParameter
	}
	if len(req.Data) == 0 {
		// Writes nothing, anywhere; the open must still be live.
		if o.f.GrantedAccess&(file.AccessWriteData|file.AccessAppendData) == 0 {
			return nil, smb2.StatusAccessDenied
		}
		if _, err := c.srv.vfs.Info(c.ctx, o.f); err != nil {
			return nil, err
		}
		return smb2.WriteResponse{}.Encode(), nil
	}
	p := c.watchedPath(o)
	var before file.Info
	if p != nil {
		if before, err = c.srv.vfs.Info(c.ctx, o.f); err != nil {
			return nil, err
		}
	}
	if err := c.srv.vfs.Write(c.ctx, o.f, off, req.Data); err != nil {
		return nil, err
	}
	if p != nil {
		filter := smb2.FileNotifyChangeLastWrite
		if off < 0 || off+int64(len(req.Data)) > before.Size {
			filter |= smb2.FileNotifyChangeSize
		}
		c.reportChange(o, p, smb2.FileActionModified, filter)
	}
	if off >= 0 {
		o.position = off + int64(len(req.Data))
	}
	return smb2.WriteResponse{Count: uint32(len(req.Data))}.Encode(), nil
}

// oplockBreak answers an oplock or lease break acknowledgement: none is
// ever granted, so none can be acknowledged: STATUS_INVALID_OPLOCK_PROTOCOL
// (MS-SMB2 3.3.5.22.1).
func (c *conn) oplockBreak(r *request) ([]byte, error) {
	return nil, smb2.StatusInvalidOplockProtocol
}
