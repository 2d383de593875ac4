package smb2

import (
	"slices"
	"testing"
)

// FuzzDecodeFileNotifyInformation: the decoder never panics, and what it
// accepts re-encodes to records it decodes the same way.
func FuzzDecodeFileNotifyInformation(f *testing.F) {
	f.Add(EncodeFileNotifyInformation([]FileNotifyInformation{{FileActionAdded, "a.txt"}, {FileActionRenamedNewName, `d\ü`}}))
	f.Add(EncodeFileNotifyInformation([]FileNotifyInformation{{FileActionRemoved, ""}}))
	f.Add([]byte{12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 2, 0, 0, 0, 'a', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, err := DecodeFileNotifyInformation(b)
		if err != nil {
			return
		}
		again, err := DecodeFileNotifyInformation(EncodeFileNotifyInformation(recs))
		if err != nil || !slices.Equal(again, recs) {
			t.Fatalf("%x: decoded %v, re-decoded %v (%v)", b, recs, again, err)
		}
		if n := FileNotifyInformationSize(recs); n != len(EncodeFileNotifyInformation(recs)) {
			t.Fatalf("size %d, encoded %d", n, len(EncodeFileNotifyInformation(recs)))
		}
	})
}
