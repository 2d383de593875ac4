package blob

const maxCopyFromURL = 256 << 20

func progress(n int64) string {
	s := itoa(n)
	return s + "/" + s
}
