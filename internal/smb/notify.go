package smb

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// Change notification (MS-SMB2 3.3.5.19, MS-FSA 2.1.4.17). The first
// CHANGE_NOTIFY on a directory open sets up a watch with its
// CompletionFilter and WATCH_TREE flag (later requests on the open reuse
// it, as smbd does). The SMB handlers of every connection of this server
// report each successful change to the server's notifyHub: a create, a
// delete (when the entry disappears at its last close), a rename, a
// write, a change of attributes, times or size. The hub queues the
// matching changes on each watch, bounded by the first request's
// OutputBufferLength (and maxNotifyBuffer), and wakes the watch's
// connection, which completes its oldest pending CHANGE_NOTIFY on that
// open with FILE_NOTIFY_INFORMATION records; changes that arrive with no
// request pending wait for the next one, which completes at once. Too
// many changes for the buffer are STATUS_NOTIFY_ENUM_DIR. Changes made
// over REST, or by another server process, are not reported (Azure Files
// does not report REST changes to SMB clients either), nor are the
// deletions made when a session or connection ends.

func shareKey(f *file.Open) string { return f.Account + "/" + f.Share }

// watching reports whether some open of the share is watched, so that
// handlers look up paths only when someone listens.
func (h *notifyHub) watching(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.watches[key]) > 0
}

func (h *notifyHub) add(w *watch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.watches == nil {
		h.watches = map[string]map[*watch]struct{}{}
	}
	if h.watches[w.key] == nil {
		h.watches[w.key] = map[*watch]struct{}{}
	}
	h.watches[w.key][w] = struct{}{}
}

func (h *notifyHub) remove(w *watch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.watches[w.key], w)
	if len(h.watches[w.key]) == 0 {
		delete(h.watches, w.key)
	}
	w.changes, w.size, w.overflow = nil, 0, false
}

// take returns and clears the changes queued on w.
func (h *notifyHub) take(w *watch) (recs []smb2.FileNotifyInformation, overflow bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	recs, overflow = w.changes, w.overflow
	w.changes, w.size, w.overflow = nil, 0, false
	return recs, overflow
}

// post queues chs on the matching watches of the share key and wakes
// their connections.
func (h *notifyHub) post(key string, chs ...change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watches[key] {
		queued := false
		for _, ch := range chs {
			if ch.filter&w.filter == 0 {
				continue
			}
			name, ok := w.relative(ch.path)
			if !ok {
				continue
			}
			queued = true
			if w.overflow {
				continue
			}
			rec := smb2.FileNotifyInformation{Action: ch.action, FileName: name}
			if n := len(w.changes); n > 0 && w.changes[n-1] == rec {
				continue // a repeat (successive writes) adds nothing
			}
			w.size += smb2.FileNotifyInformationSize([]smb2.FileNotifyInformation{rec})
			if w.size > w.limit {
				w.changes, w.size, w.overflow = nil, 0, true
				continue
			}
			w.changes = append(w.changes, rec)
		}
		if queued {
			select {
			case w.c.notifyWake <- struct{}{}:
			default:
			}
		}
	}
}

// relative returns the name of the entry at p relative to w's directory,
// if w reports changes to it: a child, or any descendant for WATCH_TREE.
// Names compare without case, as the share's do.
func (w *watch) relative(p []string) (string, bool) {
	if len(p) <= len(w.path) || (!w.tree && len(p) != len(w.path)+1) {
		return "", false
	}
	for i, c := range w.path {
		if !strings.EqualFold(c, p[i]) {
			return "", false
		}
	}
	return strings.Join(p[len(w.path):], `\`), true
}

// nameFilter is the filter bit of a name change of a file or directory.
func nameFilter(dir bool) uint32 {
	if dir {
		return smb2.FileNotifyChangeDirName
	}
	return smb2.FileNotifyChangeFileName
}

// watchedPath returns the path of o's file when some open of its share
// is watched (nil otherwise, or for the root, whose changes no watch
// sees).
func (c *conn) watchedPath(o *open) []string {
	if !c.srv.notify.watching(shareKey(o.f)) {
		return nil
	}
	p, err := c.srv.vfs.Path(c.ctx, o.f)
	if err != nil || len(p) == 0 {
		return nil
	}
	return p
}

// reportChange reports a change of the entry at p (nil: none) in o's
// share.
func (c *conn) reportChange(o *open, p []string, action, filter uint32) {
	if p == nil || filter == 0 {
		return
	}
	c.srv.notify.post(shareKey(o.f), change{path: p, action: action, filter: filter})
}

// reportRename reports the move of o's entry from oldPath to newPath:
// within a directory as a RENAMED_OLD_NAME, RENAMED_NEW_NAME pair,
// between directories as REMOVED then ADDED (smbd's way).
func (c *conn) reportRename(o *open, oldPath, newPath []string) {
	if oldPath == nil {
		return
	}
	f := nameFilter(o.f.Dir)
	oldAction, newAction := smb2.FileActionRemoved, smb2.FileActionAdded
	if len(oldPath) == len(newPath) && (&watch{path: oldPath[:len(oldPath)-1]}).isParentOf(newPath) {
		oldAction, newAction = smb2.FileActionRenamedOldName, smb2.FileActionRenamedNewName
	}
	c.srv.notify.post(shareKey(o.f),
		change{path: oldPath, action: oldAction, filter: f},
		change{path: newPath, action: newAction, filter: f})
}

func (w *watch) isParentOf(p []string) bool {
	_, ok := w.relative(p)
	return ok
}

// reportClosed reports the deletion of o's entry, at p before the close,
// if the close that returned in removed it: a delete-pending entry stays
// while other handles (of any front end) hold it.
func (c *conn) reportClosed(o *open, p []string, in file.Info) {
	if p == nil || !in.DeletePending {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	parent, err := c.srv.vfs.Open(ctx, file.OpenRequest{
		Account: o.f.Account, Share: o.f.Share, Path: p[:len(p)-1],
		DesiredAccess: file.AccessReadData | file.AccessReadAttributes, ShareAccess: 7,
		Disposition: file.DispOpen, Options: file.OptDirectoryFile,
		SessionID: o.sess.vfsID, ClientAddr: c.remote,
	})
	if err == nil {
		_, err = c.srv.vfs.Lookup(ctx, parent, p[len(p)-1])
		if _, cerr := c.srv.vfs.Close(ctx, parent); cerr != nil {
			c.log.Warn("closing a handle failed", "err", cerr)
		}
	}
	if !errors.Is(err, file.ErrNotFound) && !errors.Is(err, file.ErrPathNotFound) {
		return // still there, or unknown
	}
	c.reportChange(o, p, smb2.FileActionRemoved, nameFilter(o.f.Dir))
}

// unwatch drops o's watch, if any.
func (c *conn) unwatch(o *open) {
	if o.watch != nil {
		c.srv.notify.remove(o.watch)
		o.watch = nil
	}
}

// changeNotify answers CHANGE_NOTIFY (MS-SMB2 3.3.5.19): at once when
// changes are queued on the open's watch, else by going async.
func (c *conn) changeNotify(r *request) ([]byte, error) {
	req, err := smb2.DecodeChangeNotifyRequest(r.msg)
	if err != nil {
		return nil, err
	}
	if err := c.checkCharge(r, chargeNeeded(0, uint64(req.OutputBufferLength))); err != nil {
		return nil, err
	}
	o, err := c.lookupOpen(r, req.FileID)
	if err != nil {
		return nil, err
	}
	if !o.f.Dir {
		return nil, smb2.StatusInvalidParameter
	}
	if o.f.GrantedAccess&file.AccessReadData == 0 {
		return nil, smb2.StatusAccessDenied
	}
	if len(c.async) >= maxAsyncPerConn {
		return nil, smb2.StatusInsufficientResources
	}
	if o.watch == nil {
		p, err := c.srv.vfs.Path(c.ctx, o.f)
		if err != nil {
			return nil, err
		}
		o.watch = &watch{
			c: c, key: shareKey(o.f), path: p,
			tree:   req.Flags&smb2.ChangeNotifyWatchTree != 0,
			filter: req.CompletionFilter,
			limit:  min(int(req.OutputBufferLength), maxNotifyBuffer),
		}
		c.srv.notify.add(o.watch)
	} else if !c.notifyPending(o) {
		if recs, overflow := c.srv.notify.take(o.watch); overflow || len(recs) > 0 {
			out, err := notifyOutput(recs, overflow, req.OutputBufferLength)
			if err != nil {
				return nil, err
			}
			return smb2.ChangeNotifyResponse{Output: out}.Encode(), nil
		}
	}
	c.nextAsync++
	a := &asyncOp{id: c.nextAsync, hdr: r.hdr, sess: r.sess, open: o, signed: r.signed, outLen: req.OutputBufferLength}
	c.async[a.id] = a
	r.async = a
	return nil, errAsync
}

// notifyOutput encodes changes for a buffer of outLen bytes:
// STATUS_NOTIFY_ENUM_DIR when they overflowed or do not fit.
func notifyOutput(recs []smb2.FileNotifyInformation, overflow bool, outLen uint32) ([]byte, error) {
	if overflow || smb2.FileNotifyInformationSize(recs) > int(outLen) {
		return nil, smb2.StatusNotifyEnumDir
	}
	return smb2.EncodeFileNotifyInformation(recs), nil
}

// notifyPending reports whether a CHANGE_NOTIFY on o is pending.
func (c *conn) notifyPending(o *open) bool {
	for _, a := range c.async {
		if a.open == o && a.lock == nil {
			return true
		}
	}
	return false
}

// deliverNotifies completes, for each watched open with queued changes,
// its oldest pending CHANGE_NOTIFY (after a wake from the hub).
func (c *conn) deliverNotifies() {
	var ids []uint64
	for id, a := range c.async {
		if a.lock == nil && a.open.watch != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	done := map[*open]bool{}
	for _, id := range ids {
		a := c.async[id]
		if done[a.open] {
			continue
		}
		done[a.open] = true
		recs, overflow := c.srv.notify.take(a.open.watch)
		if !overflow && len(recs) == 0 {
			continue
		}
		out, err := notifyOutput(recs, overflow, a.outLen)
		if err != nil {
			c.finishAsync(a, smb2.StatusNotifyEnumDir)
			continue
		}
		c.finishAsyncBody(a, smb2.StatusSuccess, smb2.ChangeNotifyResponse{Output: out}.Encode())
	}
}

// cancel1 handles CANCEL (MS-SMB2 3.3.5.16): it has no response; the
// request it names, by AsyncId or MessageId, completes with
// STATUS_CANCELLED. Only asynchronous requests can still be pending.
func (c *conn) cancel1(hdr smb2.Header, msg []byte) {
	var target *asyncOp
	if hdr.Flags&smb2.FlagAsync != 0 {
		target = c.async[hdr.AsyncID]
	} else {
		for _, a := range c.async {
			if a.hdr.MessageID == hdr.MessageID {
				target = a
				break
			}
		}
		if target == nil && hdr.MessageID == 0 {
			// Samba's client (smbtorture, smbclient) cancels a request
			// whose interim response it has not yet read with MessageId
			// 0 unless AES-GMAC signing is in use: it means the
			// session's latest request, which went async before this
			// CANCEL was read.
			for _, a := range c.async {
				if a.sess.id == hdr.SessionID && (target == nil || a.id > target.id) {
					target = a
				}
			}
		}
	}
	if target == nil || target.sess.id != hdr.SessionID {
		return
	}
	if s := target.sess; s.signKey != nil && hdr.Flags&smb2.FlagSigned != 0 && !smb2.Verify(msg, s.signKey, c.signAlg) {
		return
	}
	c.finishAsync(target, smb2.StatusCancelled)
}

// finishNotifies completes the pending CHANGE_NOTIFYs of o with status,
// and its blocked LOCKs with STATUS_RANGE_NOT_LOCKED (smbd's answer when
// the open closes, its tree disconnects or its session logs off).
func (c *conn) finishNotifies(o *open, status smb2.Status) {
	for _, a := range c.async {
		if a.open == o {
			st := status
			if a.lock != nil {
				st = smb2.StatusRangeNotLocked
			}
			c.finishAsync(a, st)
		}
	}
}

// finishAsync sends the final response of a, without data, and forgets
// it.
func (c *conn) finishAsync(a *asyncOp, status smb2.Status) {
	var body []byte
	switch {
	case status.IsError() || status == smb2.StatusNotifyEnumDir:
		body = smb2.ErrorResponse{}.Encode()
	case a.lock != nil:
		body = smb2.LockResponse{}.Encode()
	default:
		body = smb2.ChangeNotifyResponse{}.Encode()
	}
	c.finishAsyncBody(a, status, body)
}

// finishAsyncBody sends the final response of a with body and forgets
// it. It grants no credits: the interim response did; it is signed when
// the request was.
func (c *conn) finishAsyncBody(a *asyncOp, status smb2.Status, body []byte) {
	delete(c.async, a.id)
	hdr := a.hdr.Reply(status)
	hdr.Flags = hdr.Flags&^smb2.FlagRelated | smb2.FlagAsync
	hdr.AsyncID = a.id
	hdr.Credits = 0
	rep := &reply{hdr: hdr, body: body, seal: sealAsync(a.sess)} // crypt.go
	if a.signed && a.sess.signKey != nil {
		rep.key = a.sess.signKey
	}
	if err := c.send([]*reply{rep}); err != nil {
		c.log.Warn("sending an async response failed", "err", err)
	}
}
