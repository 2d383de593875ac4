package app

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseAccounts(t *testing.T) {
	accts, err := ParseAccounts("a1:" + DevKey + ";a2:" + DevKey + ":" + DevKey)
	if err != nil || len(accts) != 2 || accts[0].Name != "a1" || len(accts[1].Keys) != 2 {
		t.Fatalf("ParseAccounts: %+v %v", accts, err)
	}
	for _, bad := range []string{"", "a1", "a1:", "a1:!!!", "a1:" + DevKey + ";a1:" + DevKey, ":" + DevKey, "a:b:c:d"} {
		if _, err := ParseAccounts(bad); err == nil {
			t.Errorf("ParseAccounts(%q) accepted", bad)
		}
	}
}

func TestStartAndClose(t *testing.T) {
	a, err := Start(Config{DataDir: t.TempDir(), BlobPort: 0, QueuePort: -1, TablePort: -1, FilePort: -1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	eps := a.Endpoints()
	if eps["blob"] == "" || eps["queue"] != "" || !strings.HasPrefix(a.BlobURL, "http://127.0.0.1:") {
		t.Fatalf("endpoints %v, blob URL %q", eps, a.BlobURL)
	}
	cs := a.ConnectionString(DevKey)
	if !strings.Contains(cs, "AccountName=devstoreaccount1") || !strings.Contains(cs, "BlobEndpoint="+a.BlobURL) {
		t.Fatalf("connection string %q", cs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
