package blob

// Every logged write in this package's tests also reads its blob back and
// checks the record changeTx made from what the write stored against the
// one the stored bytes give.
func init() { VerifyChangeRecords() }
