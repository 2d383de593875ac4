package blob

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/lease"
)

// valuesOnly must name every field of a container record that a copy
// shares (a map, slice, pointer or interface, at any depth; a time.Time
// is a value): decodeContainer keeps and hands out copies of the records
// it finds values-only, so a field it missed would be shared between
// callers that change their record.
func TestContainerValuesOnly(t *testing.T) {
	var shared []string
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		if ty == reflect.TypeFor[time.Time]() {
			return
		}
		switch ty.Kind() {
		case reflect.Map, reflect.Slice, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			shared = append(shared, path)
		case reflect.Struct:
			for f := range ty.Fields() {
				walk(path+"."+f.Name, f.Type)
			}
		}
	}
	walk("container", reflect.TypeFor[container]())
	slices.Sort(shared)
	if want := []string{"container.ACL", "container.Meta", "container.WORM"}; !slices.Equal(shared, want) {
		t.Fatalf("container fields a copy shares: %v; valuesOnly checks %v: check the new ones there, then here", shared, want)
	}
	for _, c := range []container{{Meta: map[string]string{}}, {ACL: []SignedID{}}, {WORM: &containerWORM{}}} {
		if c.valuesOnly() {
			t.Errorf("%+v is values-only", c)
		}
	}
}

// A decoding handed out again is a copy, equal to a fresh parse of the
// same bytes; a record that shares anything is parsed every time; a
// changed record is its new self.
func TestDecodeContainerMemo(t *testing.T) {
	at := time.Date(2026, 11, 29, 22, 0, 0, 123, time.UTC)
	plain := container{Created: at, Modified: at, ETag: `"0x1"`, Lease: lease.Lease{State: lease.StateLeased, ID: "l1", Duration: -1}, PublicAccess: "blob"}
	withMeta := plain
	withMeta.Meta = map[string]string{"k": "v"}
	key := ContainerKey("acct", "c")
	for _, rec := range []container{plain, withMeta} {
		raw, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		var first, second container
		if err := decodeContainer(key, raw, &first); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, rec) {
			t.Fatalf("decoded %+v, want %+v", first, rec)
		}
		first.ETag, first.Lease.ID = `"0x2"`, "changed"
		if first.Meta != nil {
			first.Meta["k"] = "changed"
		}
		if err := decodeContainer(key, raw, &second); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(second, rec) {
			t.Fatalf("second decoding %+v, want %+v: a change to the first reached it", second, rec)
		}
	}
	changed := plain
	changed.ETag = `"0x3"`
	raw, _ := json.Marshal(changed)
	var got container
	if err := decodeContainer(key, raw, &got); err != nil || got.ETag != `"0x3"` {
		t.Fatalf("changed record decoded as %+v, %v", got, err)
	}
	if err := decodeContainer(key, []byte(`{"c":`), &got); err == nil {
		t.Fatal("a broken record decoded")
	}
}
