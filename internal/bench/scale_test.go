package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestScaleSmall runs the scale benchmark at two small sizes against an
// in-process server: every phase of every service completes (a listing
// that misses a blob, a name never freed or a failed request fails it)
// and the report names each figure.
func TestScaleSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and fills it")
	}
	var out bytes.Buffer
	err := Main([]string{"-workloads", "scale", "-scale-sizes", "200,500", "-scale-samples", "20", "-clients", "4"}, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"== 200 items", "== 500 items", "blobs: fill", "Get Blob Properties p50", "List Blobs, all 500:",
		"root listing with a delimiter", "Delete Container: answered in", "entities: fill", "Get Entity p50", "query of one partition",
		"Delete Table: answered in", "messages: fill", "Peek Messages p50", "Clear Messages: answered in", "Delete Queue (emptied)",
		"during the delete p50", "RSS"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
