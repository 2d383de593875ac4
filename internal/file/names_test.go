package file

// copySMB is the name the tests of copy_test.go give CopySMB, the parsed
// SMB headers of Copy File, from before it was exported.
type copySMB = CopySMB
