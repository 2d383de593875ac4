package console_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake"
	dldirectory "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/directory"
	dlfile "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	dlservice "github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/service"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	gosmb2 "github.com/hirochachacha/go-smb2"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/events"
	cfile "github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// The console is tested in a real browser: Debian's chromium, headless,
// driven over the DevTools protocol by chromedp (never a downloaded
// browser). Without a chromium binary the test skips, unless CI is set:
// there it fails (scripts/install-chromium.sh installs it, .ci/run calls
// it). CERULEAN_CONSOLE_SCREENSHOTS=dir writes the screenshots of each
// view there (docs/console/ holds the committed ones); otherwise they go
// to a temporary directory, so taking them is tested either way.

func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CERULEAN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium binary on PATH and CI is set: run scripts/install-chromium.sh (apt-get install chromium)")
	}
	t.Skip("no chromium binary on PATH: run scripts/install-chromium.sh (apt-get install chromium) to run the console's browser tests")
	return ""
}

const lakeKeyB64 = "bGFrZS1hY2NvdW50LWtleS1mb3ItdGhlLWNvbnNvbGUtdGVzdA=="

type consoleEnv struct {
	t      *testing.T
	app    *app.App
	ctx    context.Context // the browser tab
	shots  string
	blob   *azblob.Client
	queue  *azqueue.ServiceClient
	table  *aztables.ServiceClient
	file   *service.Client
	mu     sync.Mutex
	urls   []string // every URL the page requested
	origin string
}

func startConsole(t *testing.T) *consoleEnv {
	t.Helper()
	browser := chromium(t)
	// A second account, hierarchical, for the Data Lake view.
	lakeKey, _ := base64.StdEncoding.DecodeString(lakeKeyB64)
	cfg := app.Config{DataDir: t.TempDir(), NoSync: true, BlobPort: 0, QueuePort: 0, TablePort: 0, FilePort: 0, DFSPort: 0, SMBPort: 0,
		MetricsPort: -1, Console: true, ConsolePort: 0, ClockControl: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Accounts: append(app.DevAccounts(), auth.Account{Name: "lake", Keys: [][]byte{lakeKey}}), HierarchicalAccounts: []string{"lake"},
		ChangeFeedAccounts: []string{app.DevAccount}}
	// A webhook subscription for the dev account's blob events, whose
	// receiver answers Event Grid's validation handshake and accepts the
	// rest: the Changes view shows its delivery state.
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var evs []struct {
			EventType string `json:"eventType"`
			Data      struct {
				ValidationCode string `json:"validationCode"`
			} `json:"data"`
		}
		_ = json.NewDecoder(r.Body).Decode(&evs)
		if len(evs) == 1 && evs[0].EventType == "Microsoft.EventGrid.SubscriptionValidationEvent" {
			_ = json.NewEncoder(w).Encode(map[string]string{"validationResponse": evs[0].Data.ValidationCode})
		}
	}))
	t.Cleanup(hook.Close)
	cfg.Events.Subscriptions = []events.Subscription{{Name: "console-hook", Account: app.DevAccount, Endpoint: events.Endpoint{Type: "webhook", URL: hook.URL + "/hook"}}}
	// Every store: in memory with CERULEAN_TEST_BACKEND=memory, on
	// PostgreSQL (a fresh schema) with CERULEAN_TEST_POSTGRES, embedded
	// otherwise; .ci/run runs this test in all three passes.
	switch {
	case testenv.InMemory():
		cfg.InMemory, cfg.DataDir = true, ""
	case os.Getenv(pgtest.EnvVar) != "":
		cfg.Postgres, _ = pgtest.Schema(t)
		cfg.PostgresMaxConns = 8
	}
	a, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	e := &consoleEnv{t: t, app: a, origin: a.ConsoleURL}
	e.shots = os.Getenv("CERULEAN_CONSOLE_SCREENSHOTS")
	if e.shots == "" {
		e.shots = t.TempDir()
	}
	opts := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, Transport: &http.Client{Timeout: 30 * time.Second}}
	bcred, _ := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if e.blob, err = azblob.NewClientWithSharedKeyCredential(a.BlobURL, bcred, &azblob.ClientOptions{ClientOptions: opts}); err != nil {
		t.Fatal(err)
	}
	qcred, _ := azqueue.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if e.queue, err = azqueue.NewServiceClientWithSharedKeyCredential(a.QueueURL, qcred, &azqueue.ClientOptions{ClientOptions: opts}); err != nil {
		t.Fatal(err)
	}
	tcred, _ := aztables.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if e.table, err = aztables.NewServiceClientWithSharedKey(a.TableURL, tcred, &aztables.ClientOptions{ClientOptions: opts}); err != nil {
		t.Fatal(err)
	}
	fcred, _ := service.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	if e.file, err = service.NewClientWithSharedKeyCredential(a.FileURL, fcred, &service.ClientOptions{ClientOptions: opts}); err != nil {
		t.Fatal(err)
	}

	allocOpts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.NoFirstRun, chromedp.WindowSize(1280, 800), chromedp.Flag("headless", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), allocOpts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	chromedp.ListenTarget(ctx, func(ev any) {
		if r, ok := ev.(*network.EventRequestWillBeSent); ok {
			e.mu.Lock()
			e.urls = append(e.urls, r.Request.URL)
			e.mu.Unlock()
		}
	})
	if err := chromedp.Run(ctx, network.Enable(), chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("starting %s: %v", browser, err)
	}
	e.ctx = ctx
	return e
}

// run runs browser actions with a deadline.
func (e *consoleEnv) run(actions ...chromedp.Action) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		e.t.Fatal(err)
	}
}

// open loads a view and waits for it to render; confirm() answers yes.
func (e *consoleEnv) open(view string) {
	e.t.Helper()
	e.run(chromedp.Navigate(e.origin+"/#"+view), chromedp.Reload(), chromedp.WaitReady("body"))
	e.waitJS(fmt.Sprintf("document.body.dataset.ready === %q", view))
	e.js("window.confirm = () => true", nil)
}

// js evaluates an expression.
func (e *consoleEnv) js(expr string, out any) {
	e.t.Helper()
	e.run(chromedp.Evaluate(expr, out))
}

// waitJS waits until expr is true.
func (e *consoleEnv) waitJS(expr string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Poll(expr, nil, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		var page, status string
		_ = chromedp.Run(e.ctx, chromedp.Evaluate("document.querySelector('main').innerText", &page), chromedp.Evaluate("document.querySelector('#status').innerText", &status))
		e.t.Fatalf("waiting for %s: %v\nstatus: %s\npage:\n%s", expr, err, status, page)
	}
}

// waitText waits until the element sel holds text.
func (e *consoleEnv) waitText(sel, text string) {
	e.t.Helper()
	e.waitJS(fmt.Sprintf("(() => { const el = document.querySelector(%q); return !!el && el.innerText.includes(%q); })()", sel, text))
}

// click clicks the first button or link in scope whose text is label.
func (e *consoleEnv) click(scope, label string) {
	e.t.Helper()
	var ok bool
	e.js(fmt.Sprintf(`(() => { const b = [...document.querySelectorAll(%q + ' button')].find((x) => x.textContent.trim() === %q); if (!b) return false; b.click(); return true; })()`, scope, label), &ok)
	if !ok {
		var page string
		e.js("document.querySelector('main').innerText", &page)
		e.t.Fatalf("no %q in %s:\n%s", label, scope, page)
	}
}

// setValue sets an input's value.
func (e *consoleEnv) setValue(sel, v string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf("document.querySelector(%q).value = %q", sel, v), nil)
}

func (e *consoleEnv) screenshot(name string) {
	e.t.Helper()
	var buf []byte
	e.run(chromedp.CaptureScreenshot(&buf)) // the viewport, as a PNG

	if err := os.WriteFile(filepath.Join(e.shots, name+".png"), buf, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// TestConsoleInBrowser loads each view with data made through the SDKs
// and checks what it shows, then acts through the UI and checks the
// effect through the SDKs.
func TestConsoleInBrowser(t *testing.T) {
	e := startConsole(t)
	ctx := context.Background()

	t.Run("blob", func(t *testing.T) {
		e.t = t
		_, err := e.blob.CreateContainer(ctx, "photos", nil)
		must(t, err)
		for _, n := range []string{"2026/beach.jpg", "2026/snow.jpg", "readme.txt", "leased.txt"} {
			_, err := e.blob.UploadBuffer(ctx, "photos", n, []byte("content of "+n), nil)
			must(t, err)
		}
		bc := e.blob.ServiceClient().NewContainerClient("photos").NewBlobClient("leased.txt")
		lc, err := lease.NewBlobClient(bc, nil)
		must(t, err)
		acquired := time.Now().UTC()
		_, err = lc.AcquireLease(ctx, 60, nil)
		must(t, err)

		_, err = e.blob.CreateContainer(ctx, "archive", nil)
		must(t, err)
		clc, err := lease.NewContainerClient(e.blob.ServiceClient().NewContainerClient("archive"), nil)
		must(t, err)
		_, err = clc.AcquireLease(ctx, 45, nil)
		must(t, err)

		var cell string
		e.open("blob")
		e.waitText("tr[data-container='archive']", "leased")
		e.waitText("tr[data-container='archive'] .lease-expiry", "until")
		e.js(`document.querySelector("tr[data-container='archive'] .lease-expiry").textContent`, &cell)
		if exp, err := time.Parse("2006-01-02 15:04:05 UTC", strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cell), "until"))); err != nil ||
			exp.Sub(acquired.Add(45*time.Second)).Abs() > 2*time.Second {
			t.Errorf("container lease expiry %q (%v), acquired %s for 45 s", cell, err, acquired)
		}
		e.click("main", "photos")
		e.waitText("main tr[data-blob='leased.txt']", "leased")
		e.waitText("main tr[data-blob='leased.txt']", "until")
		e.js(`document.querySelector("tr[data-blob='leased.txt'] .lease-expiry").textContent`, &cell)
		exp, err := time.Parse("2006-01-02 15:04:05 UTC", strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(cell), "until")))
		if err != nil {
			t.Fatalf("lease expiry %q: %v", cell, err)
		}
		if d := exp.Sub(acquired.Add(60 * time.Second)); d < -2*time.Second || d > 2*time.Second {
			t.Errorf("lease expiry shown %s, acquired %s for 60 s", exp, acquired)
		}
		e.waitText("main", "2026/") // the prefix as a folder
		e.screenshot("blob")

		// Upload through the UI, verified through the SDK.
		src := filepath.Join(t.TempDir(), "uploaded.txt")
		must(t, os.WriteFile(src, []byte("sent by the browser"), 0o644))
		e.run(chromedp.SetUploadFiles("#upload-file", []string{src}, chromedp.ByQuery))
		e.click("main", "Upload")
		e.waitText("#status", "Uploaded uploaded.txt")
		e.waitText("main", "uploaded.txt")
		resp, err := e.blob.DownloadStream(ctx, "photos", "uploaded.txt", nil)
		must(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != "sent by the browser" {
			t.Errorf("uploaded blob holds %q", got)
		}

		// Break the lease through the UI, verified through the SDK.
		e.click("tr[data-blob='leased.txt']", "Break lease")
		e.waitText("#status", "Lease broken on leased.txt")
		props, err := bc.GetProperties(ctx, nil)
		must(t, err)
		if props.LeaseState == nil || *props.LeaseState != "broken" {
			t.Errorf("lease state after the UI's break: %v", props.LeaseState)
		}

		// Copy URL: the blob's URL on the blob port.
		e.click("tr[data-blob='readme.txt']", "Copy URL")
		e.waitText("#status", e.app.BlobURL+"/photos/readme.txt")

		// Another key than the account's: the service's 403, nothing shown.
		e.run(e.setValue("#key", base64.StdEncoding.EncodeToString([]byte("not the account key"))))
		e.js(`document.querySelector('#signin button').click()`, nil)
		e.waitText("#status", "403 AuthenticationFailed")
		e.run(e.setValue("#key", app.DevKey))
		e.js(`document.querySelector('#signin button').click()`, nil)
		e.waitText("main", "readme.txt")

		// Prefix navigation and the properties panel.
		e.click("main", "2026/")
		e.waitText("main", "beach.jpg")
		e.click("tr[data-blob='2026/snow.jpg']", "snow.jpg")
		e.waitText("#blob-details", "BlockBlob")
	})

	t.Run("queue", func(t *testing.T) {
		e.t = t
		_, err := e.queue.CreateQueue(ctx, "jobs", nil)
		must(t, err)
		qc := e.queue.NewQueueClient("jobs")
		for _, m := range []string{"resize 1", "resize 2", "resize 3"} {
			_, err := qc.EnqueueMessage(ctx, m, nil)
			must(t, err)
		}
		got, err := qc.DequeueMessage(ctx, &azqueue.DequeueMessageOptions{VisibilityTimeout: to.Ptr(int32(120))})
		must(t, err)
		taken := *got.Messages[0].MessageText

		e.open("queue")
		e.click("main", "jobs")
		e.waitText("main", "All messages, invisible ones included (3)")
		var row string
		e.js(fmt.Sprintf(`[...document.querySelectorAll('tr[data-message]')].map((r) => r.innerText).find((t) => t.includes(%q))`, taken), &row)
		if !strings.Contains(row, "invisible") || !strings.Contains(row, "outstanding") || !strings.Contains(row, "\t1\t") {
			t.Errorf("dequeued message row: %q", row)
		}
		e.screenshot("queue")

		// Put through the UI, seen by the SDK's peek.
		e.run(chromedp.SendKeys(`input[aria-label="Message text"]`, "from the console", chromedp.ByQuery))
		e.click("main", "Put message")
		e.waitText("main", "All messages, invisible ones included (4)")
		peek, err := qc.PeekMessages(ctx, &azqueue.PeekMessagesOptions{NumberOfMessages: to.Ptr(int32(32))})
		must(t, err)
		found := false
		for _, m := range peek.Messages {
			found = found || *m.MessageText == "from the console"
		}
		if !found {
			t.Error("the SDK does not see the message put through the console")
		}
	})

	t.Run("table", func(t *testing.T) {
		e.t = t
		_, err := e.table.CreateTable(ctx, "people", nil)
		must(t, err)
		tc := e.table.NewClient("people")
		for i, name := range []string{"Ada", "Grace", "Linus"} {
			ent := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "team", RowKey: fmt.Sprint(i)},
				Properties: map[string]any{"Name": name, "Commits": aztables.EDMInt64(int64(1000 * (i + 1))), "Joined": aztables.EDMDateTime(time.Date(2020+i, 1, 2, 3, 4, 5, 0, time.UTC))}}
			raw, _ := ent.MarshalJSON()
			_, err := tc.AddEntity(ctx, raw, nil)
			must(t, err)
		}

		e.open("table")
		e.click("main", "people")
		e.waitText("main", "Grace")
		e.waitText("tr[data-entity='team/1']", "Int64")
		e.waitText("tr[data-entity='team/1']", "DateTime")
		e.waitText("tr[data-entity='team/1']", `W/"datetime`)
		// A query: $filter and $select.
		e.run(e.setValue("#q-filter", "Name eq 'Linus'"), e.setValue("#q-select", "Name,Commits"))
		e.click("main", "Query")
		e.waitJS(`document.querySelectorAll('tr[data-entity]').length === 1 && document.querySelector('tr[data-entity]').innerText.includes('Linus') && !document.querySelector('tr[data-entity]').innerText.includes('2023')`)
		e.run(e.setValue("#q-filter", ""), e.setValue("#q-select", ""), e.setValue("#q-top", "2"))
		e.click("main", "Query")
		e.waitJS(`document.querySelectorAll('tr[data-entity]').length === 2`)
		e.click("main", "Next page")
		e.waitJS(`document.querySelectorAll('tr[data-entity]').length === 1 && document.querySelector("tr[data-entity='team/2']") !== null`)
		e.click("main", "Previous page")
		e.waitJS(`document.querySelector("tr[data-entity='team/0']") !== null`)
		e.screenshot("table")

		// Edit with an ETag made stale by the SDK: the 412.
		e.click("tr[data-entity='team/0']", "Edit")
		e.waitJS(`document.querySelector('#entity-json') !== null`)
		upd := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "team", RowKey: "0"}, Properties: map[string]any{"Name": "Ada L."}}
		raw, _ := upd.MarshalJSON()
		_, err = tc.UpdateEntity(ctx, raw, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
		must(t, err)
		e.js(`(() => { const a = document.querySelector('#entity-json'); const v = JSON.parse(a.value); v.Name = 'Ada Lovelace'; a.value = JSON.stringify(v); })()`, nil)
		e.click("main", "Save")
		e.waitText("#status", "412")
		e.waitText("#status", "UpdateConditionNotSatisfied")
		e.screenshot("table-412")
		ent, err := tc.GetEntity(ctx, "team", "0", nil)
		must(t, err)
		if !bytes.Contains(ent.Value, []byte(`"Ada L."`)) {
			t.Errorf("the stale edit changed the entity: %s", ent.Value)
		}
	})

	t.Run("file", func(t *testing.T) {
		e.t = t
		_, err := e.file.CreateShare(ctx, "docs", nil)
		must(t, err)
		fc := e.file.NewShareClient("docs").NewRootDirectoryClient().NewFileClient("report.txt")
		_, err = fc.Create(ctx, 5, nil)
		must(t, err)
		nc, err := net.Dial("tcp", e.app.SMBAddr)
		must(t, err)
		defer nc.Close()
		d := &gosmb2.Dialer{Initiator: &gosmb2.NTLMInitiator{User: app.DevAccount, Password: app.DevKey}}
		s, err := d.DialContext(ctx, nc)
		must(t, err)
		defer func() { _ = s.Logoff() }()
		fs, err := s.Mount("docs")
		must(t, err)
		defer func() { _ = fs.Umount() }()
		f, err := fs.OpenFile("report.txt", os.O_RDWR, 0)
		must(t, err)
		defer f.Close()

		// A second open through the File domain's open API (file.Opens), the SMB server's
		// own door: a byte-range lock and the delete disposition.
		_, err = e.file.NewShareClient("docs").NewRootDirectoryClient().NewFileClient("locked.txt").Create(ctx, 100, nil)
		must(t, err)
		v := e.app.File.Opens("console-test")
		must(t, v.Heartbeat(ctx, v.Now().Add(time.Hour)))
		o, err := v.Open(ctx, cfile.OpenRequest{Account: app.DevAccount, Share: "docs", Path: []string{"locked.txt"},
			DesiredAccess: 0x1 | 0x2 | 0x10000, ShareAccess: 0x7, Disposition: cfile.DispOpen, ClientAddr: "192.0.2.9:445"})
		must(t, err)
		must(t, v.Lock(ctx, o, []cfile.LockRange{{Offset: 10, Length: 20, Exclusive: true}}))
		must(t, v.SetDisposition(ctx, o, true))

		e.open("file")
		e.click("main", "docs")
		e.waitText("main", "report.txt")
		e.waitJS(`document.querySelector("tr[data-path='report.txt'] .share-mode") !== null`)
		var mode string
		e.js(`document.querySelector("tr[data-path='report.txt'] .share-mode").textContent`, &mode)
		// go-smb2's OpenFile asks for FILE_SHARE_READ|FILE_SHARE_WRITE
		// (client.go, OpenFile).
		if mode != "Read, Write" {
			t.Errorf("share mode shown %q", mode)
		}
		e.waitText("tr[data-path='locked.txt'] .locks", "exclusive 10+20")
		e.waitText("tr[data-path='locked.txt'] .delete-state", "delete pending")
		e.waitText("tr[data-path='locked.txt']", "Read, Write, Delete")
		e.screenshot("file")

		// Force-close through the UI, verified through the SDK.
		e.click("tr[data-path='report.txt']", "Force close")
		e.waitText("#status", "Closed handle")
		hs, err := fc.ListHandles(ctx, nil)
		must(t, err)
		if len(hs.Handles) != 0 {
			t.Errorf("%d handles after the UI's force close", len(hs.Handles))
		}
	})

	t.Run("activity and clock", func(t *testing.T) {
		e.t = t
		_, err := e.blob.DownloadStream(ctx, "photos", "no-such-blob", nil)
		if err == nil {
			t.Fatal("downloaded a missing blob")
		}
		e.open("activity")
		e.waitText("main", "BlobNotFound")
		var row string
		e.js(`[...document.querySelectorAll('tr[data-request]')].map((r) => r.innerText).find((t) => t.includes('BlobNotFound'))`, &row)
		if !strings.Contains(row, "404") || !strings.Contains(row, "getBlob") || !strings.Contains(row, "/photos/no-such-blob") {
			t.Errorf("the failed download's row: %q", row)
		}
		// Request rates come from the server's metrics between two
		// refreshes (every 3 s): downloads made meanwhile show as a bar.
		e.waitText("main", "Requests per second")
		for i := 0; i < 20; i++ {
			_, _ = e.blob.DownloadStream(ctx, "photos", "no-such-blob", nil)
		}
		e.waitJS(`[...document.querySelectorAll('.rate-op')].some((x) => x.textContent === 'blob getBlob')`)
		e.screenshot("activity")

		before := e.app.Clock.Offset()
		e.run(e.setValue("#clock-by", "90s"))
		e.click("#clock", "Advance clock")
		e.waitText("#status", "Clock advanced")
		if got := e.app.Clock.Offset() - before; got != 90*time.Second {
			t.Errorf("the UI advanced the clock by %s", got)
		}
		e.waitText("#clock-state", "offset 1m30s")
	})

	t.Run("changes", func(t *testing.T) {
		e.t = t
		if _, err := e.blob.CreateContainer(ctx, "feed", nil); err != nil {
			t.Fatal(err)
		}
		up, err := e.blob.UploadBuffer(ctx, "feed", "news/one.txt", []byte("first"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.blob.DeleteBlob(ctx, "feed", "news/one.txt", nil); err != nil {
			t.Fatal(err)
		}
		e.open("changes")
		e.waitText("main", "BlobDeleted")
		// The subscription delivered both events to the receiver.
		e.waitJS(`(() => { const r = document.querySelector("tr[data-subscription='console-hook']"); return r && r.querySelector('.validated').textContent === 'validated' && Number(r.querySelector('.delivered').textContent) >= 2; })()`)
		// Newest first: the delete, then the create with the ETag the
		// upload returned.
		var rows []string
		e.js(`[...document.querySelectorAll('tr[data-seq]')].map((r) => r.innerText)`, &rows)
		if len(rows) < 2 || !strings.Contains(rows[0], "BlobDeleted") || !strings.Contains(rows[0], "/containers/feed/blobs/news/one.txt") ||
			!strings.Contains(rows[1], "BlobCreated") || !strings.Contains(rows[1], strings.Trim(string(*up.ETag), `"`)) {
			t.Errorf("change rows: %q", rows)
		}
		e.screenshot("changes")
	})

	t.Run("data lake", func(t *testing.T) {
		e.t = t
		cred, err := azdatalake.NewSharedKeyCredential("lake", lakeKeyB64)
		must(t, err)
		base := strings.TrimSuffix(e.app.DFSURL, "/"+app.DevAccount) + "/lake"
		svc, err := dlservice.NewClientWithSharedKeyCredential(base, cred, &dlservice.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
		must(t, err)
		fsc := svc.NewFileSystemClient("raw")
		_, err = fsc.Create(ctx, nil)
		must(t, err)
		_, err = fsc.NewDirectoryClient("2026").Create(ctx, &dldirectory.CreateOptions{Permissions: to.Ptr("0750"), Umask: to.Ptr("0000")})
		must(t, err)
		fc := fsc.NewFileClient("2026/data.csv")
		_, err = fc.Create(ctx, nil)
		must(t, err)
		_, err = fc.SetAccessControl(ctx, &dlfile.SetAccessControlOptions{ACL: to.Ptr("user::rw-,user:1234:r--,group::r--,mask::r--,other::---")})
		must(t, err)

		e.open("dfs")
		// Sign in as the hierarchical account through the form.
		e.run(e.setValue("#account", "lake"), e.setValue("#key", lakeKeyB64))
		e.js(`document.querySelector('#signin button').click()`, nil)
		e.waitText("main", "raw")
		e.click("main", "raw")
		e.waitText("tr[data-path='2026']", "rwxr-x---")
		e.click("main", "2026/")
		e.waitText("tr[data-path='2026/data.csv']", "rw-r-----")
		e.click("tr[data-path='2026/data.csv']", "ACL")
		e.waitText("#acl", "user:1234:r--")
		e.screenshot("datalake")
		// Back to the dev account for what follows.
		e.run(e.setValue("#account", app.DevAccount), e.setValue("#key", app.DevKey))
		e.js(`document.querySelector('#signin button').click()`, nil)
		e.waitText("main", "Choose a filesystem.")
	})

	t.Run("phone-sized and keyboard", func(t *testing.T) {
		e.t = t
		e.run(chromedp.EmulateViewport(390, 844))
		for _, v := range []string{"blob", "queue", "table", "file", "dfs", "activity"} {
			e.open(v)
			var over bool
			e.js(`document.documentElement.scrollWidth > window.innerWidth + 1`, &over)
			if over {
				var wide string
				e.js(`[...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !el.closest('.scroll')).slice(0, 5).map((el) => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().right)).join('; ')`, &wide)
				t.Errorf("%s view scrolls sideways at 390 px: %s", v, wide)
			}
		}
		e.open("blob")
		e.click("main", "photos")
		e.waitText("main", "readme.txt")
		e.screenshot("blob-phone")
		e.run(chromedp.EmulateViewport(1280, 800))
		// The tabs are reachable by keyboard: focus one, arrow right,
		// Enter opens the next view.
		e.run(chromedp.Focus(`#tabs button[data-view="blob"]`, chromedp.ByQuery), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.Enter))
		e.waitJS(`document.body.dataset.ready === 'queue'`)
	})

	// No request left the console's origin.
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, u := range e.urls {
		if !strings.HasPrefix(u, e.origin+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
			t.Errorf("the page requested %s, outside %s", u, e.origin)
		}
	}
	if len(e.urls) == 0 {
		t.Error("no request recorded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
