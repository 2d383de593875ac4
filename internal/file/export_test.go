package file

// SetPutRangeFromURLAttempts sets how many attempts Put Range from URL
// makes (1: the source is always read inside the write transaction) and
// returns a function restoring the previous value. Tests using it must
// not run in parallel.
func SetPutRangeFromURLAttempts(n int) (restore func()) {
	old := putRangeFromURLAttempts
	putRangeFromURLAttempts = n
	return func() { putRangeFromURLAttempts = old }
}
