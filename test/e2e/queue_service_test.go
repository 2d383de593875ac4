package e2e

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/queueerror"
	"github.com/cerulean-storage/cerulean/internal/app"
)

func TestQueueServiceProperties(t *testing.T) {
	e := quStart(t)
	got, err := e.svc.GetServiceProperties(e.ctx, nil)
	quMust(t, err)
	if got.Logging == nil || *got.Logging.Version != "1.0" || *got.Logging.Read || got.HourMetrics == nil || *got.HourMetrics.Enabled || len(got.CORS) != 0 {
		t.Fatalf("defaults: %+v", got.StorageServiceProperties)
	}

	_, err = e.svc.SetProperties(e.ctx, &azqueue.SetPropertiesOptions{
		CORS: []*azqueue.CORSRule{{AllowedOrigins: to.Ptr("http://a.example"), AllowedMethods: to.Ptr("GET,PUT"), MaxAgeInSeconds: to.Ptr(int32(60))}},
		Logging: &azqueue.Logging{Read: to.Ptr(true), Write: to.Ptr(false), Delete: to.Ptr(true),
			RetentionPolicy: &azqueue.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(5))}},
	})
	quMust(t, err)
	got, err = e.svc.GetServiceProperties(e.ctx, nil)
	quMust(t, err)
	if len(got.CORS) != 1 || *got.CORS[0].AllowedOrigins != "http://a.example" || *got.CORS[0].MaxAgeInSeconds != 60 {
		t.Errorf("CORS not stored: %+v", got.CORS)
	}
	if !*got.Logging.Read || !*got.Logging.Delete || *got.Logging.RetentionPolicy.Days != 5 {
		t.Errorf("Logging not stored: %+v", got.Logging)
	}
	if got.HourMetrics == nil || *got.HourMetrics.Version != "1.0" {
		t.Errorf("HourMetrics lost on a partial set: %+v", got.HourMetrics)
	}

	// Last writer wins: a second set replaces what it names.
	_, err = e.svc.SetProperties(e.ctx, &azqueue.SetPropertiesOptions{HourMetrics: &azqueue.Metrics{Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true),
		RetentionPolicy: &azqueue.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}}})
	quMust(t, err)
	got, err = e.svc.GetServiceProperties(e.ctx, nil)
	quMust(t, err)
	if !*got.HourMetrics.Enabled || len(got.CORS) != 1 {
		t.Errorf("after second set: %+v", got.StorageServiceProperties)
	}

	bad := []struct{ name, body string }{
		{"malformed", "<StorageServiceProperties><Cors>"},
		{"wrong root", "<Other/>"},
		{"six CORS rules", "<StorageServiceProperties><Cors>" + strings.Repeat("<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders/><ExposedHeaders/><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule>", 6) + "</Cors></StorageServiceProperties>"},
		{"retention days 0", "<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>0</Days></RetentionPolicy></HourMetrics></StorageServiceProperties>"},
		{"retention days 366", "<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy></Logging></StorageServiceProperties>"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			_, err := e.svc.SetProperties(quWithBody(e.ctx, b.body), &azqueue.SetPropertiesOptions{})
			quWant(t, err, http.StatusBadRequest, queueerror.InvalidXMLDocument)
		})
	}
	_, err = e.svc.SetProperties(quWithBody(e.ctx, "<StorageServiceProperties>"+strings.Repeat(" ", 64<<10)+"</StorageServiceProperties>"), &azqueue.SetPropertiesOptions{})
	quWant(t, err, http.StatusRequestEntityTooLarge, queueerror.RequestBodyTooLarge)
	after, err := e.svc.GetServiceProperties(e.ctx, nil)
	quMust(t, err)
	if len(after.CORS) != 1 || !*after.HourMetrics.Enabled || *after.Logging.RetentionPolicy.Days != 5 {
		t.Errorf("a rejected set changed the properties: %+v", after.StorageServiceProperties)
	}
}

func TestQueueServiceStats(t *testing.T) {
	e := quStart(t)
	// Served on the secondary endpoint only (Get Queue Service Stats).
	_, err := e.svc.GetStatistics(e.ctx, nil)
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidQueryParameterValue)
	st, err := quClient(t, e.app.QueueURL+"-secondary", app.DevKey).GetStatistics(e.ctx, nil)
	quMust(t, err)
	if st.GeoReplication == nil || *st.GeoReplication.Status != "live" || st.GeoReplication.LastSyncTime == nil {
		t.Fatalf("stats: %+v", st.GeoReplication)
	}
	if d := e.clock.Now().Sub(*st.GeoReplication.LastSyncTime); d < 0 || d > time.Second {
		t.Errorf("LastSyncTime %v, clock %v", st.GeoReplication.LastSyncTime, e.clock.Now())
	}
}

// quList collects a full listing through the pager.
func quList(t *testing.T, e *quEnv, o *azqueue.ListQueuesOptions) (names []string, pages int, meta map[string]map[string]*string) {
	t.Helper()
	meta = map[string]map[string]*string{}
	p := e.svc.NewListQueuesPager(o)
	for p.More() {
		page, err := p.NextPage(e.ctx)
		quMust(t, err)
		pages++
		for _, q := range page.Queues {
			names = append(names, *q.Name)
			meta[*q.Name] = q.Metadata
		}
	}
	return names, pages, meta
}

func TestQueueList(t *testing.T) {
	e := quStart(t)
	want := []string{"alpha-1", "alpha-2", "alpha-3", "alphabet", "beta", "gamma-q"}
	for i, n := range want {
		var o *azqueue.CreateOptions
		if i%2 == 0 {
			o = &azqueue.CreateOptions{Metadata: map[string]*string{"idx": to.Ptr(n)}}
		}
		_, err := e.svc.CreateQueue(e.ctx, n, o)
		quMust(t, err)
	}

	all, pages, meta := quList(t, e, nil)
	if !quEqual(all, want) || pages != 1 {
		t.Fatalf("list = %v in %d pages, want %v", all, pages, want)
	}
	if len(meta["alpha-1"]) != 0 {
		t.Errorf("metadata returned without include=metadata: %v", meta["alpha-1"])
	}

	got, pages, _ := quList(t, e, &azqueue.ListQueuesOptions{Prefix: to.Ptr("alpha"), MaxResults: to.Ptr(int32(2))})
	if !quEqual(got, want[:4]) || pages != 2 {
		t.Errorf("prefix alpha, 2 per page: %v in %d pages", got, pages)
	}
	got, _, _ = quList(t, e, &azqueue.ListQueuesOptions{Prefix: to.Ptr("alpha-")})
	if !quEqual(got, want[:3]) {
		t.Errorf("prefix alpha-: %v", got)
	}
	got, pages, _ = quList(t, e, &azqueue.ListQueuesOptions{MaxResults: to.Ptr(int32(1))})
	if !quEqual(got, want) || pages != len(want) {
		t.Errorf("1 per page: %v in %d pages", got, pages)
	}
	got, _, _ = quList(t, e, &azqueue.ListQueuesOptions{Marker: to.Ptr("beta")})
	if !quEqual(got, want[4:]) {
		t.Errorf("from marker beta: %v", got)
	}
	got, _, _ = quList(t, e, &azqueue.ListQueuesOptions{Prefix: to.Ptr("zzz")})
	if len(got) != 0 {
		t.Errorf("prefix zzz: %v", got)
	}

	_, _, meta = quList(t, e, &azqueue.ListQueuesOptions{Include: azqueue.ListQueuesInclude{Metadata: true}})
	for i, n := range want {
		m := meta[n]
		if i%2 == 0 {
			if len(m) != 1 || m["idx"] == nil || *m["idx"] != n {
				t.Errorf("%s metadata %v", n, m)
			}
		} else if len(m) != 0 {
			t.Errorf("%s metadata %v, want none", n, m)
		}
	}

	// One page carries Marker, MaxResults and NextMarker.
	page, err := e.svc.NewListQueuesPager(&azqueue.ListQueuesOptions{MaxResults: to.Ptr(int32(2)), Marker: to.Ptr("alpha-2")}).NextPage(e.ctx)
	quMust(t, err)
	if *page.MaxResults != 2 || *page.Marker != "alpha-2" || *page.NextMarker != "alphabet" || len(page.Queues) != 2 {
		t.Errorf("page: max %v marker %v next %v queues %d", *page.MaxResults, *page.Marker, *page.NextMarker, len(page.Queues))
	}
	if !strings.HasSuffix(*page.ServiceEndpoint, "/devstoreaccount1/") {
		t.Errorf("ServiceEndpoint %s", *page.ServiceEndpoint)
	}

	// More than 5000 is clamped, not an error (as List Containers documents;
	// List Queues,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/list-queues1);
	// 0 is out of range.
	_, err = e.svc.NewListQueuesPager(&azqueue.ListQueuesOptions{MaxResults: to.Ptr(int32(6000))}).NextPage(e.ctx)
	quMust(t, err)
	_, err = e.svc.NewListQueuesPager(&azqueue.ListQueuesOptions{MaxResults: to.Ptr(int32(0))}).NextPage(e.ctx)
	quWant(t, err, http.StatusBadRequest, queueerror.OutOfRangeQueryParameterValue)
	_, err = e.svc.NewListQueuesPager(nil).NextPage(quWithQuery(e.ctx, "include", "metadata,acl"))
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidQueryParameterValue)
	_, err = e.svc.NewListQueuesPager(nil).NextPage(quWithQuery(e.ctx, "maxresults", "ten"))
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidQueryParameterValue)
}

func TestQueueAnonymousRefused(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	quEnqueue(t, e.ctx, q, "secret", nil)
	anon := e.quAnon()
	aq := anon.NewQueueClient(strings.TrimPrefix(q.URL(), e.app.QueueURL+"/"))
	calls := map[string]func() error{
		"list":        func() error { _, err := anon.NewListQueuesPager(nil).NextPage(e.ctx); return err },
		"properties":  func() error { _, err := anon.GetServiceProperties(e.ctx, nil); return err },
		"create":      func() error { _, err := anon.CreateQueue(e.ctx, "anon-queue", nil); return err },
		"metadata":    func() error { _, err := aq.GetProperties(e.ctx, nil); return err },
		"acl":         func() error { _, err := aq.GetAccessPolicy(e.ctx, nil); return err },
		"enqueue":     func() error { _, err := aq.EnqueueMessage(e.ctx, "x", nil); return err },
		"peek":        func() error { _, err := aq.PeekMessages(e.ctx, nil); return err },
		"dequeue":     func() error { _, err := aq.DequeueMessage(e.ctx, nil); return err },
		"clear":       func() error { _, err := aq.ClearMessages(e.ctx, nil); return err },
		"delete":      func() error { _, err := aq.Delete(e.ctx, nil); return err },
		"unknown op":  func() error { _, err := anon.GetStatistics(quWithQuery(e.ctx, "comp", "bogus"), nil); return err },
		"missing one": func() error { _, err := anon.NewQueueClient("nope").GetProperties(e.ctx, nil); return err },
	}
	names := make([]string, 0, len(calls))
	for n := range calls {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			quWant(t, calls[n](), http.StatusUnauthorized, quNoAuthentication)
		})
	}
	if texts := quPeekTexts(t, e.ctx, q); !quEqual(texts, []string{"secret"}) {
		t.Errorf("queue changed by anonymous calls: %v", texts)
	}
	if names, _, _ := quList(t, e, nil); len(names) != 1 {
		t.Errorf("queues: %v", names)
	}
}

func TestQueueUnknownOperations(t *testing.T) {
	e := quStart(t)
	q := e.quQueue()
	_, err := e.svc.GetStatistics(quWithQuery(e.ctx, "comp", "bogus"), nil)
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidQueryParameterValue)
	_, err = q.GetProperties(quWithQuery(e.ctx, "comp", "list"), nil)
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidQueryParameterValue)
	_, err = q.PeekMessages(quWithQuery(e.ctx, "peekonly", "maybe"), nil)
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidQueryParameterValue)
	// PUT on the messages collection is not an operation.
	_, err = q.ClearMessages(quEdit(e.ctx, func(req *policyRequest) error { req.Raw().Method = http.MethodPut; return nil }), nil)
	quWant(t, err, http.StatusMethodNotAllowed, queueerror.UnsupportedHTTPVerb)
	// Deeper paths do not exist.
	_, err = q.ClearMessages(quEdit(e.ctx, func(req *policyRequest) error { req.Raw().URL.Path += "/a/b"; return nil }), nil)
	quWant(t, err, http.StatusBadRequest, queueerror.InvalidURI)
}
