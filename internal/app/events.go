package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/blob/blobrest"
	"github.com/cerulean-storage/cerulean/internal/events"
	"github.com/cerulean-storage/cerulean/internal/events/webhook"
	"github.com/cerulean-storage/cerulean/internal/queue"
)

// subscriptions are every configured subscription, checked.
func (c Config) subscriptions() ([]events.Subscription, error) {
	served := map[string]bool{}
	for _, a := range c.Accounts {
		served[a.Name] = true
	}
	subs := append([]events.Subscription(nil), c.Events.Subscriptions...)
	for i := range subs {
		if err := subs[i].ParseFilters(); err != nil {
			return nil, fmt.Errorf("event subscription %q: %v", subs[i].Name, err)
		}
	}
	if len(c.Events.SubscriptionsFile) > 0 {
		fs, err := events.ParseSubscriptions(c.Events.SubscriptionsFile, func(a string) bool { return served[a] })
		if err != nil {
			return nil, err
		}
		subs = append(subs, fs...)
	}
	for i, u := range c.Events.Webhooks {
		for _, a := range c.Accounts {
			s, err := events.Webhook(a.Name, u, i)
			if err != nil {
				return nil, fmt.Errorf("--event-webhook %q: %v", u, err)
			}
			subs = append(subs, s)
		}
	}
	names := map[string]bool{}
	for _, s := range subs {
		if names[strings.ToLower(s.Name)] {
			return nil, fmt.Errorf("event subscription %q is configured twice", s.Name)
		}
		names[strings.ToLower(s.Name)] = true
	}
	return subs, nil
}

// setupEvents builds the deliverer of the configured subscriptions,
// turns the change log on for their accounts and gives new
// subscriptions their starting position, before the server takes
// writes.
func (a *App) setupEvents(subs []events.Subscription) error {
	a.Blob.SetChangeLog(events.Accounts(subs))
	if len(subs) == 0 {
		return nil
	}
	a.events.d = events.New(events.Config{
		Store: a.store, Clock: a.cfg.Clock, Logger: a.cfg.Logger, Subs: subs,
		Senders: map[string]events.Sender{
			"webhook": webhook.Sender{Clock: a.cfg.Clock},
			"storagequeue": events.QueueSender{Put: func(ctx context.Context, account, name, text string) error {
				// Event Grid's default message time to live in a queue
				// destination: 7 days.
				_, err := a.Queue.PutMessage(ctx, queue.PutMessageInput{QueueID: queue.QueueID{Account: account, Name: name}, Text: text, TTL: 7 * 24 * time.Hour})
				return err
			}},
		},
		DeadLetter: func(ctx context.Context, account, container, name string, body []byte) error {
			_, err := a.Blob.PutBlob(ctx, blob.PutBlobInput{Ref: blob.BlobRef{Account: account, Container: container, Blob: name}, Type: blob.BlockBlob,
				NewBlob: blob.NewBlob{HTTPHeaders: blob.HTTPHeaders{ContentType: "application/json"}}, Body: bytes.NewReader(body), Length: int64(len(body))})
			return err
		},
		BlobURL:  a.accountBlobURL,
		DFSURL:   a.accountDFSURL,
		Poll:     a.cfg.Events.Poll,
		Retry:    a.cfg.Events.Retry,
		LeaseTTL: a.cfg.Events.LeaseTTL,
	})
	// A write appending to a subscribed account's log wakes its
	// deliverer at once (the poll remains for other front ends).
	if !a.cfg.Events.NoWake {
		a.Blob.SetAppended(a.events.d.Notify)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.events.d.Init(ctx); err != nil {
		return fmt.Errorf("event subscriptions: %w", err)
	}
	return nil
}

// accountBlobURL is account's Blob endpoint URL, for events' data.url.
func (a *App) accountBlobURL(account string) string {
	base := a.BlobURL
	if i := strings.LastIndexByte(base, '/'); i > len("https://") {
		base = base[:i]
	}
	return base + "/" + account
}

// accountDFSURL is account's dfs endpoint URL ("" without one), for the
// URLs of Data Lake events. The listeners start after setupEvents; the
// deliverer asks only once they serve.
func (a *App) accountDFSURL(account string) string {
	base := a.DFSURL
	if base == "" {
		return ""
	}
	if i := strings.LastIndexByte(base, '/'); i > len("https://") {
		base = base[:i]
	}
	return base + "/" + account
}

// startEvents runs the deliverer until ctx ends.
func (a *App) startEvents(ctx context.Context) {
	a.events.done = make(chan struct{})
	go func() {
		defer close(a.events.done)
		if a.events.d != nil {
			a.events.d.Run(ctx)
		}
	}()
}

// waitEvents waits for the deliverer to stop.
func (a *App) waitEvents() {
	if a.events.done != nil {
		<-a.events.done
	}
}

// reserved serves the admin endpoints under server.ReservedPrefix: GET
// /events (the event subscriptions), /worm/ (container-level WORM
// policies and legal holds, blobrest.WORMHandler, with Shared Key) and
// the rest (clock control).
func (a *App) reserved(clock, worm http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/events" || strings.HasPrefix(r.URL.Path, "/events/") {
			webhook.Handler(a.events.d).ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, blobrest.WORMPrefix+"/") {
			worm.ServeHTTP(w, r)
			return
		}
		clock.ServeHTTP(w, r)
	})
}
