package extent

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestFinishFreesRefusedChunks: the chunks of a staged body whose
// recording function returned an error (any error: an SMB refusal is a
// plain sentinel, not an Azure error) are removed by Finish at once, as
// are those of a body whose recording never ran; a body whose
// transaction committed keeps them.
func TestFinishFreesRefusedChunks(t *testing.T) {
	s, _ := dtService(t)
	ctx := context.Background()
	body := bytes.Repeat([]byte("r"), InlineMax+1) // a chunk, not inline
	refusal := errors.New("refused by the domain")
	for _, tc := range []struct {
		name  string
		run   bool  // the recording Update runs
		fnErr error // what its function returns
		keep  bool
	}{
		{name: "refused", run: true, fnErr: refusal},
		{name: "never tried"},
		{name: "committed", run: true, keep: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := s.Stage(ctx, bytes.NewReader(body), int64(len(body)), Digests{}, false)
			if err != nil {
				t.Fatal(err)
			}
			id := st.Parts[0].ID[1:]
			recorded := false
			if tc.run {
				err = s.store.Update(ctx, Recording(&recorded, func(tx kv.Tx) error {
					if err := st.Write(tx); err != nil {
						return err
					}
					return tc.fnErr
				}))
				if !errors.Is(err, tc.fnErr) {
					t.Fatalf("Update: %v, want %v", err, tc.fnErr)
				}
			}
			if recorded != tc.keep {
				t.Fatalf("recorded = %v, want %v", recorded, tc.keep)
			}
			st.Finish(ctx, recorded)
			if n := len(s.pins.snapshot()); n != 0 {
				t.Fatalf("%d chunks still pinned after Finish", n)
			}
			r, err := s.chunks.Open(ctx, id)
			switch {
			case tc.keep && err != nil:
				t.Fatalf("committed chunk removed: %v", err)
			case tc.keep:
				r.Close()
			case !errors.Is(err, chunk.ErrNotFound):
				t.Fatalf("chunk of a refused write: %v, want it removed at once", err)
			}
		})
	}
}
