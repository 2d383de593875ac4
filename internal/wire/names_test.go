package wire

import (
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

func TestValidContainerName(t *testing.T) {
	tests := []struct {
		name string
		code string
	}{
		{"abc", ""},
		{"my-container-1", ""},
		{"0ab", ""},
		{strings.Repeat("a", 63), ""},
		{"$root", ""},
		{"$logs", ""},
		{"$web", ""},
		{"", azerr.OutOfRangeInput},
		{"ab", azerr.OutOfRangeInput},
		{"nx", azerr.OutOfRangeInput},
		{strings.Repeat("a", 64), azerr.OutOfRangeInput},
		{"$foo", azerr.InvalidResourceName},
		{"$ROOT", azerr.InvalidResourceName},
		{"Abc", azerr.InvalidResourceName},
		{"-abc", azerr.InvalidResourceName},
		{"abc-", azerr.InvalidResourceName},
		{"a--b", azerr.InvalidResourceName},
		{"a_bc", azerr.InvalidResourceName},
		{"a.bc", azerr.InvalidResourceName},
		{"ab c", azerr.InvalidResourceName},
		{"abé", azerr.InvalidResourceName}, // 4 bytes: length passes, chars fail
		{"---", azerr.InvalidResourceName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidContainerName(tc.name)
			checkErr(t, err, tc.code)
			if tc.code == azerr.OutOfRangeInput {
				e, _ := azerr.As(err)
				if e.Message != nameLengthMessage {
					t.Fatalf("message %q", e.Message)
				}
			}
		})
	}
}

func TestValidQueueAndShareName(t *testing.T) {
	for _, f := range []func(string) error{ValidQueueName, ValidShareName} {
		checkErr(t, f("my-queue"), "")
		checkErr(t, f("$root"), azerr.InvalidResourceName)
		checkErr(t, f("q"), azerr.OutOfRangeInput)
		checkErr(t, f("a--b"), azerr.InvalidResourceName)
	}
}

func TestValidBlobName(t *testing.T) {
	emoji := "\U0001F60A" // 2 UTF-16 code units, 4 UTF-8 bytes
	han := "阿"            // 1 UTF-16 code unit, 3 UTF-8 bytes
	tests := []struct {
		label string
		name  string
		code  string
	}{
		{"simple", "a", ""},
		{"path", "dir/a b.txt", ""},
		{"trailing dot", "a.", ""},
		{"trailing slash", "dir/", ""},
		{"backslash", `a\b`, ""},
		{"1024 ascii", strings.Repeat("a", 1024), ""},
		{"512 emoji = 1024 units", strings.Repeat(emoji, 512), ""},
		{"1024 han (3072 bytes)", strings.Repeat(han, 1024), ""},
		{"empty", "", azerr.OutOfRangeInput},
		{"1025 ascii", strings.Repeat("a", 1025), azerr.OutOfRangeInput},
		{"513 emoji", strings.Repeat(emoji, 513), azerr.OutOfRangeInput},
		{"1025 han", strings.Repeat(han, 1025), azerr.OutOfRangeInput},
		{"invalid utf-8", "a\xffb", azerr.InvalidResourceName},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			checkErr(t, ValidBlobName(tc.name), tc.code)
		})
	}
}

// TestValidNewContainerName: a client creates $root and $web but not
// $logs, which is only addressed (ValidContainerName accepts it).
func TestValidNewContainerName(t *testing.T) {
	for name, code := range map[string]string{"$logs": azerr.InvalidResourceName, "$root": "", "$web": "", "$xyz": azerr.InvalidResourceName, "abc": "", "ab": azerr.OutOfRangeInput} {
		checkErr(t, ValidNewContainerName(name), code)
	}
}

func TestField(t *testing.T) {
	h := Header{"X-Ms-Version": {"2025-01-05", "ignored"}, "Empty": {}}
	for _, c := range []struct{ k, want string }{
		{"X-Ms-Version", "2025-01-05"}, // the first value, as http.Header.Get
		{"Empty", ""},
		{"Absent", ""},
		{"x-ms-version", ""}, // names are not folded: the caller passes canonical ones
	} {
		if got := Field(h, c.k); got != c.want {
			t.Errorf("Field(%q) = %q, want %q", c.k, got, c.want)
		}
	}
}
