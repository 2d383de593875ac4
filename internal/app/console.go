package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/clockctl"
	"github.com/cerulean-storage/cerulean/internal/clockctl/clockhttp"
	"github.com/cerulean-storage/cerulean/internal/console"
	"github.com/cerulean-storage/cerulean/internal/events/webhook"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/queue"
)

// startConsole serves the web console on cfg.ConsolePort at cfg.Host.
func (a *App) startConsole(ctl *clockctl.Control) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(a.cfg.Host, strconv.Itoa(a.cfg.ConsolePort)))
	if err != nil {
		return fmt.Errorf("console listener: %w", err)
	}
	a.ConsoleURL = "http://" + ln.Addr().String()
	services := map[string]string{}
	for name, addr := range a.Endpoints() {
		services[name] = a.cfg.scheme() + "://" + addr
	}
	names := make([]string, len(a.cfg.Accounts))
	lookup := map[string]auth.Account{}
	devKey := ""
	for i, acct := range a.cfg.Accounts {
		names[i] = acct.Name
		lookup[acct.Name] = acct
		if acct.Name == DevAccount && len(acct.Keys) > 0 && string(acct.Keys[0]) == string(DevAccounts()[0].Keys[0]) {
			devKey = DevKey // the well-known key, only when it is the one served
		}
	}
	ccfg := console.Config{
		Services:     services,
		Accounts:     func(n string) (auth.Account, bool) { acct, ok := lookup[n]; return acct, ok },
		AccountNames: names,
		DevAccount:   DevAccount,
		DevKey:       devKey,
		Clock:        a.cfg.Clock,
		Activity:     a.activity,
		Inspector:    inspector{a},
		Logger:       a.cfg.Logger,
	}
	if ctl != nil {
		ccfg.ClockControl = clockhttp.Handler(ctl)
	}
	if a.events.d != nil {
		ccfg.Events = webhook.Handler(a.events.d)
	}
	if a.metrics != nil {
		ccfg.Counts = a.metrics.RequestCounts
	}
	a.consoleSrv = &http.Server{Handler: console.Handler(ccfg), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(a.cfg.Logger.Handler(), slog.LevelDebug)}
	go func() {
		if err := a.consoleSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.cfg.Logger.Error("console listener", "err", err)
		}
	}()
	return nil
}

// inspector is console.Inspector over the domain services.
type inspector struct{ a *App }

func (x inspector) QueueMessages(ctx context.Context, account, name string, limit int) ([]console.QueueMessage, error) {
	ms, err := x.a.Queue.InspectMessages(ctx, queue.QueueID{Account: account, Name: name}, limit)
	if err != nil {
		return nil, err
	}
	out := make([]console.QueueMessage, len(ms))
	for i, m := range ms {
		out[i] = console.QueueMessage{ID: m.ID, Inserted: m.Inserted, Expires: m.Expires, NextVisible: m.NextVisible, Visible: m.Visible,
			DequeueCount: m.DequeueCount, ReceiptOutstanding: m.ReceiptOutstanding, Text: m.Text}
	}
	return out, nil
}

func (x inspector) FileHandles(ctx context.Context, account, share string) ([]console.FileHandle, error) {
	var out []console.FileHandle
	in := file.ListHandlesInput{Ref: file.Ref{Account: account, Share: share, Now: x.a.cfg.Clock.Now()}, Recursive: true, MaxResults: 5000}
	for {
		page, err := x.a.File.ListHandles(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, h := range page.Handles {
			out = append(out, console.FileHandle{HandleID: h.HandleID, Path: h.Path, FileID: h.FileID, SessionID: h.SessionID, Client: h.ClientIP,
				Opened: h.OpenTime, Access: strings.ReplaceAll(h.Access.String(), "|", ", "), ShareMode: shareMode(h.ShareAccess.String()), DeleteOnClose: h.DeleteOnClose})
		}
		if page.NextMarker == "" || len(out) >= 5000 {
			return out, x.locksAndPending(ctx, account, share, out)
		}
		pos, err := handle.DecodeMarker(page.NextMarker)
		if err != nil {
			return out, x.locksAndPending(ctx, account, share, out)
		}
		in.After = pos
	}
}

// locksAndPending adds to each handle the byte-range locks it holds and
// whether its file is delete-pending, read in one view transaction
// through package handle's read-only functions (after the listing's own
// transaction: a handle closed in between shows no locks).
func (x inspector) locksAndPending(ctx context.Context, account, share string, hs []console.FileHandle) error {
	if len(hs) == 0 {
		return nil
	}
	now := x.a.cfg.Clock.Now()
	return x.a.store.View(ctx, func(tx kv.Tx) error {
		pending, err := handle.DeletePendingIn(tx, account, share)
		if err != nil {
			return err
		}
		for i := range hs {
			h := &hs[i]
			h.DeletePending = pending[h.FileID]
			locks, err := handle.Locks(tx, now, account, share, h.FileID, h.HandleID)
			if errors.Is(err, handle.ErrNoHandle) {
				h.Locks = []console.ByteRange{}
				continue
			}
			if err != nil {
				return err
			}
			h.Locks = make([]console.ByteRange, len(locks))
			for j, l := range locks {
				h.Locks[j] = console.ByteRange{Offset: l.Offset, Length: l.Length, Exclusive: l.Exclusive}
			}
		}
		return nil
	})
}

func (x inspector) BlobLease(ctx context.Context, account, container, name string) (console.BlobLease, bool, error) {
	st, ok, err := x.a.Blob.InspectLease(ctx, blob.BlobRef{Account: account, Container: container, Blob: name})
	if err != nil || !ok {
		return console.BlobLease{}, ok, err
	}
	return console.BlobLease{State: st.State, Status: st.Status, Duration: st.Duration, Expires: st.Expires, BreakAt: st.BreakAt}, true, nil
}

func (x inspector) ContainerLease(ctx context.Context, account, container string) (console.BlobLease, bool, error) {
	st, ok, err := x.a.Blob.InspectContainerLease(ctx, account, container)
	if err != nil || !ok {
		return console.BlobLease{}, ok, err
	}
	return console.BlobLease{State: st.State, Status: st.Status, Duration: st.Duration, Expires: st.Expires, BreakAt: st.BreakAt}, true, nil
}

func (x inspector) Changes(ctx context.Context, account string, n int) ([]console.Change, bool, error) {
	if !x.a.cfg.changeFeedOn()(account) {
		return nil, false, nil
	}
	var recs []changelog.Record
	err := x.a.store.View(ctx, func(tx kv.Tx) error {
		last, err := changelog.LastSeq(tx, account)
		if err != nil {
			return err
		}
		from := uint64(0)
		if last > uint64(n) {
			from = last - uint64(n)
		}
		recs, _, err = changelog.After(tx, account, from, n)
		return err
	})
	if err != nil {
		return nil, true, err
	}
	out := make([]console.Change, 0, len(recs))
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		out = append(out, console.Change{Seq: r.Seq, Time: r.EventTime, Type: r.EventType, Subject: r.Subject, API: r.Data.API,
			ETag: r.Data.ETag, ContentLength: r.Data.ContentLength, BlobType: r.Data.BlobType, RequestID: r.Data.RequestID})
	}
	return out, true, nil
}

// shareMode names an SMB share mode as FILE_SHARE_* flags read ("" is
// an exclusive open: no sharing).
func shareMode(s string) string {
	if s == "" || s == "None" || s == "0" {
		return "none (exclusive)"
	}
	return strings.ReplaceAll(s, "|", ", ")
}
