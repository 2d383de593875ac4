package extent

import (
	"bytes"
	"context"
	"crypto/md5"
	"io"
	"math/rand"
	"testing"
)

// TestSealedAtRest: content staged with a Cipher is stored encrypted
// (neither the inline item nor the chunk holds the plaintext), its
// digests are the plaintext's, and any range reads back with the key —
// decrypted from the range's own counter block — and as other bytes
// without it or with another key.
func TestSealedAtRest(t *testing.T) {
	s, _ := dtService(t)
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, 32)
	c, err := NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewCipher(bytes.Repeat([]byte{8}, 32))
	rng := rand.New(rand.NewSource(1))
	for _, size := range []int{1000, InlineMax, InlineMax + 1, ChunkMax + 4099} {
		plain := make([]byte, size)
		rng.Read(plain)
		st, err := s.StageEmbeddedSealed(ctx, bytes.NewReader(plain), int64(size), c)
		if err != nil {
			t.Fatal(err)
		}
		if sum := md5.Sum(plain); !bytes.Equal(st.MD5, sum[:]) {
			t.Fatalf("%d: MD5 of the ciphertext", size)
		}
		stored := &bytes.Buffer{}
		for _, p := range st.Parts {
			if p.ID == "" {
				t.Fatalf("%d: an encrypted body was embedded", size)
			}
			if d, ok := st.inline[p.ID]; ok {
				stored.Write(d)
				continue
			}
			r, err := s.chunks.Open(ctx, p.ID[1:])
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(stored, io.NewSectionReader(r, 0, p.Len))
			r.Close()
		}
		if stored.Len() != size || bytes.Equal(stored.Bytes(), plain) || bytes.Contains(stored.Bytes(), plain[:64]) {
			t.Fatalf("%d: the stored bytes are the plaintext", size)
		}
		read := func(c *Cipher, off, n int64) []byte {
			r := s.NewReaderSealed(ctx, st.Parts, st.inline, off, n, c)
			defer r.Close()
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		for _, rg := range [][2]int64{{0, int64(size)}, {1, 15}, {17, 100}, {int64(size) - 33, 33}, {int64(size) / 2, int64(size) / 3}} {
			if got := read(c, rg[0], rg[1]); !bytes.Equal(got, plain[rg[0]:rg[0]+rg[1]]) {
				t.Fatalf("%d: range %v does not decrypt", size, rg)
			}
			if got := read(other, rg[0], rg[1]); bytes.Equal(got, plain[rg[0]:rg[0]+rg[1]]) {
				t.Fatalf("%d: range %v decrypts with another key", size, rg)
			}
		}
		st.Release()
	}
}
