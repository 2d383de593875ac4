package e2e

import (
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
)

// TestReservedContainerNames: $logs is Storage Analytics' container and
// no client creates it, through the Blob API (400 InvalidResourceName) or
// as a Data Lake filesystem (the same code in the dfs endpoint's JSON);
// $root and $web are created as before, and any other $ name is an
// invalid name. Filesystem - Create now applies the container naming
// rules too (it applied none: "Bad_Name" and "ab" were created). Failed
// before the fix ($logs was created by both doors).
func TestReservedContainerNames(t *testing.T) {
	e := start(t)
	_, err := e.c.CreateContainer(e.ctx, "$logs", nil)
	wantCode(t, err, 400, bloberror.InvalidResourceName)
	_, err = e.c.CreateContainer(e.ctx, "$other", nil)
	wantCode(t, err, 400, bloberror.InvalidResourceName)
	for _, name := range []string{"$root", "$web"} {
		_, err = e.c.CreateContainer(e.ctx, name, nil)
		must(t, err)
	}
	if _, err := e.c.ServiceClient().NewContainerClient("$logs").GetProperties(e.ctx, nil); err == nil {
		t.Fatal("a refused $logs exists")
	}

	d := startDL(t, true)
	for _, tc := range []struct {
		name, code string
		status     int
	}{
		{"$logs", "InvalidResourceName", 400},
		{"Bad_Name", "InvalidResourceName", 400},
		{"ab", "OutOfRangeInput", 400},
	} {
		_, err := d.fs(tc.name).Create(d.ctx, nil)
		wantDL(t, err, tc.status, tc.code)
	}
	d.mkfs("$web")
}
