package file

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// openIn is an SMB CREATE whose parameters Opens.Open has validated (the
// disposition, options, attributes, access bits and path names): the
// domain decides the rest.
type openIn struct {
	OpenRequest
	// attrs are the request's attributes an entry keeps (storableAttrs).
	attrs Attributes
	// owner is the front end whose liveness the new handle follows.
	owner string
}

// open opens or creates in.Path (SMB2 CREATE) in one transaction and
// returns the open. On an existing item it applies, in this order
// (MS-FSA 2.1.5.1; MS-SMB2 3.3.5.9): the disposition against what
// exists and the kind (admitOpen), delete-pending, the read-only
// attribute (readOnlyAtOpen), the overwrite's hidden and system
// attributes, a REST lease (leaseAtOpen), then the sharing check against
// every live open of the file (handle.Open, MS-FSA 2.1.5.1.2.2; a REST
// lease counts as an open with Write and Delete access), and only then
// an overwrite's or supersede's truncation (replaceContent, the same
// effect as Create File over an existing file). A create refuses a
// delete-pending parent and makes the record with newItem.
func (d domain) open(ctx context.Context, in *openIn) (*Open, error) {
	r := &in.OpenRequest
	var o *Open
	err := d.s.store.Update(ctx, func(tx kv.Tx) error {
		o = nil
		now := d.s.clock.Now()
		if r.Account != "" && r.Share != "" {
			if err := prefetchPath(tx, r.Account, r.Share, "", r.Path, true); err != nil {
				return err
			}
		}
		if _, err := smbShare(tx, r.Account, r.Share); err != nil {
			return err
		}
		parent, e, err := walkSMB(tx, r.Account, r.Share, r.Path)
		if err != nil {
			return err
		}
		if e != nil {
			o, err = d.openExisting(tx, now, in, parent, e)
		} else {
			o, err = d.openCreate(tx, now, in, parent)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// truncates reports whether disposition disp replaces an existing file's
// content (FILE_SUPERSEDE, FILE_OVERWRITE, FILE_OVERWRITE_IF).
func truncates(disp Disposition) bool {
	return disp == DispSupersede || disp == DispOverwrite || disp == DispOverwriteIf
}

// admitOpen applies to an SMB open of the existing item e the checks an
// open must pass before the sharing check: the disposition and kind,
// delete-pending (the rule REST operations meet in handle.CheckRESTOp:
// refused by ByDeletePending), the read-only attribute (readOnlyAtOpen),
// the share root's delete-on-close, an overwrite's hidden and system
// attributes and a REST lease (leaseAtOpen). It returns whether e is
// leased, which the sharing check needs.
func (d domain) admitOpen(tx kv.Tx, now time.Time, in *openIn, e *Entry) (leased bool, err error) {
	r := &in.OpenRequest
	doc := r.Options&OptDeleteOnClose != 0
	if r.Disposition == DispCreate {
		return false, fmt.Errorf("%w: %s", ErrExists, e.Name)
	}
	if e.Dir {
		if r.Options&OptNonDirectoryFile != 0 {
			return false, ErrIsDirectory
		}
		// smbd's open_directory refuses the truncating dispositions.
		if r.Disposition != DispOpen && r.Disposition != DispOpenIf {
			return false, fmt.Errorf("%w: disposition %d on a directory", ErrInvalidParameter, r.Disposition)
		}
	} else if r.Options&OptDirectoryFile != 0 {
		return false, ErrNotDirectory
	}
	pending, err := handle.IsDeletePending(tx, r.Account, r.Share, FormatID(e.ID))
	if err != nil {
		return false, err
	}
	if pending {
		return false, refuse(ByDeletePending, ErrDeletePending)
	}
	truncate := truncates(r.Disposition)
	explicit := MapAccess(r.DesiredAccess&^AccessMaximumAllowed, false)
	if err := d.readOnlyAtOpen(e, explicit, doc, truncate); err != nil {
		return false, err
	}
	switch {
	case e.ID == RootID && doc:
		return false, fmt.Errorf("%w: the share root cannot be deleted", ErrAccessDenied)
	case truncate && doc && in.attrs&AttrReadOnly != 0:
		// Overwriting with the read-only attribute and delete-on-close:
		// as a create with both (inferred).
		return false, fmt.Errorf("%w: delete-on-close with the read-only attribute", ErrCannotDelete)
	}
	if truncate && r.Disposition != DispSupersede {
		// MS-FSA: an overwrite must restate the hidden and system
		// attributes of the file it replaces (CreateFile's documented
		// ERROR_ACCESS_DENIED).
		for _, a := range []Attributes{AttrHidden, AttrSystem} {
			if e.SMB.Attrs&a != 0 && in.attrs&a == 0 {
				return false, fmt.Errorf("%w: overwrite must keep the %v attribute", ErrAccessDenied, a)
			}
		}
	}
	return d.leaseAtOpen(e, now, truncate)
}

// openExisting is open when the path exists.
func (d domain) openExisting(tx kv.Tx, now time.Time, in *openIn, parent, e *Entry) (*Open, error) {
	r := &in.OpenRequest
	leased, err := d.admitOpen(tx, now, in, e)
	if err != nil {
		return nil, err
	}
	doc := r.Options&OptDeleteOnClose != 0
	readOnly := !e.Dir && e.SMB.Attrs&AttrReadOnly != 0
	granted := MapAccess(r.DesiredAccess, readOnly)
	h, err := handle.Open(tx, now, in.handleRequest(parent, e, granted, doc, leased))
	if err != nil {
		return nil, vfsHandleErr(err)
	}
	action := ActionOpened
	if truncates(r.Disposition) {
		action = ActionOverwritten
		if r.Disposition == DispSupersede {
			action = ActionSuperseded
		}
		if err := replaceContent(tx, now, e); err != nil {
			return nil, err
		}
		// Overwrite and supersede replace the attributes (MS-FSA:
		// FileAttributes | ARCHIVE) and stamp a content write, which is
		// also an access.
		e.SMB.Attrs = in.attrs | AttrArchive
		e.SMB.LastWrite, e.SMB.Changed, e.SMB.LastAccess = now, now, time.Time{}
		touch(e, now)
		if err := putEntry(tx, r.Account, r.Share, "", e); err != nil {
			return nil, err
		}
	}
	return in.newOpen(e, h, granted, doc, action), nil
}

// openCreate is open when the path does not exist.
func (d domain) openCreate(tx kv.Tx, now time.Time, in *openIn, parent *Entry) (*Open, error) {
	r := &in.OpenRequest
	doc := r.Options&OptDeleteOnClose != 0
	if r.Disposition == DispOpen || r.Disposition == DispOverwrite {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, strings.Join(r.Path, `\`))
	}
	if doc && in.attrs&AttrReadOnly != 0 {
		// smb2.delete-on-close-perms.READONLY: creating a read-only file
		// with delete-on-close is STATUS_CANNOT_DELETE (MS-FSA 2.1.5.1.1).
		return nil, fmt.Errorf("%w: delete-on-close with the read-only attribute", ErrCannotDelete)
	}
	// An empty path is the root, which exists: parent is set here.
	if parent.ID != RootID {
		pending, err := handle.IsDeletePending(tx, r.Account, r.Share, FormatID(parent.ID))
		if err != nil {
			return nil, err
		}
		if pending {
			return nil, refuse(ByDeletePending, fmt.Errorf("%w: the directory is delete-pending", ErrDeletePending))
		}
	}
	e, err := newItem(tx, r.Account, r.Share, parent, r.Path[len(r.Path)-1], r.Options&OptDirectoryFile != 0, in.attrs, now)
	if err != nil {
		return nil, err
	}
	touch(e, now)
	if err := putEntry(tx, r.Account, r.Share, "", e); err != nil {
		return nil, err
	}
	granted := MapAccess(r.DesiredAccess, false)
	h, err := handle.Open(tx, now, in.handleRequest(parent, e, granted, doc, false))
	if err != nil {
		return nil, vfsHandleErr(err)
	}
	return in.newOpen(e, h, granted, doc, ActionCreated), nil
}

func (in *openIn) handleRequest(parent, e *Entry, granted uint32, doc, leased bool) handle.OpenRequest {
	r := &in.OpenRequest
	req := handle.OpenRequest{
		Account: r.Account, Share: r.Share, FileID: FormatID(e.ID),
		Path: strings.Join(r.Path, "/"), SessionID: r.SessionID, ClientIP: r.ClientAddr,
		Access: handle.AccessFromNT(granted), ShareAccess: handle.ShareFromNT(r.ShareAccess),
		DeleteOnClose: doc, Owner: in.owner, Leased: leased,
	}
	if parent != nil {
		req.ParentID = FormatID(parent.ID)
	}
	return req
}

func (in *openIn) newOpen(e *Entry, h handle.Handle, granted uint32, doc bool, action CreateAction) *Open {
	r := &in.OpenRequest
	num, _ := handle.ParseHandleID(h.HandleID)
	return &Open{
		Account: r.Account, Share: r.Share, FileID: e.ID, HandleID: h.HandleID, HandleNum: num,
		Dir: e.Dir, GrantedAccess: granted, ShareAccess: r.ShareAccess, DeleteOnClose: doc,
		Action: action, Info: infoOf(e, false),
	}
}
