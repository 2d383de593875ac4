package crash

import "sync"

// fillAcked fills items 0..n-1 with put, from eight workers, skipping the
// ones acked already marks (a fill a kill interrupted goes on where it
// stopped) and marking each put acknowledged, under mu (the model's
// lock, which the verifier takes too). It returns the first error a put
// met (the server killed meanwhile, typically); the other workers stop at
// their next item.
func fillAcked(mu *sync.Mutex, acked []bool, n int, put func(i int) error) error {
	var wg sync.WaitGroup
	var emu sync.Mutex
	var err error
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				emu.Lock()
				failed := err != nil
				emu.Unlock()
				mu.Lock()
				done := acked[i]
				mu.Unlock()
				if failed {
					return
				}
				if done {
					continue
				}
				if perr := put(i); perr != nil {
					emu.Lock()
					err = perr
					emu.Unlock()
					return
				}
				mu.Lock()
				acked[i] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return err
}
