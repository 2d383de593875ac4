package smb2

import (
	"math"
	"time"
)

// Filetime is a FILETIME: 100-nanosecond intervals since 1601-01-01 UTC
// (MS-DTYP 2.3.3), signed as MS-FSCC uses it. In SET_INFO
// FileBasicInformation, 0 means "leave unchanged" (FiletimeUnchanged), -1
// "stop updating this time automatically" and -2 "resume updating"
// (MS-FSCC 2.4.7).
type Filetime int64

// Special FileBasicInformation values (MS-FSCC 2.4.7).
const (
	FiletimeUnchanged    Filetime = 0
	FiletimeStopUpdates  Filetime = -1
	FiletimeResumeUpdate Filetime = -2
)

// filetimeUnixEpoch is 1970-01-01 in FILETIME seconds: 369 years, 89 of
// them leap years.
const filetimeUnixEpochSeconds = 11644473600

// FiletimeOf converts t to a FILETIME, truncated to 100 ns. The zero
// time.Time gives 0; times before 1601 give 0 and times after year 30828
// give the largest FILETIME.
func FiletimeOf(t time.Time) Filetime {
	if t.IsZero() {
		return 0
	}
	sec := t.Unix() + filetimeUnixEpochSeconds
	if sec < 0 {
		return 0
	}
	if sec > (math.MaxInt64-9_999_999)/10_000_000 {
		return math.MaxInt64
	}
	return Filetime(sec*1e7 + int64(t.Nanosecond()/100))
}

// Time converts f to a UTC time.Time. Zero and negative values (the
// special SET_INFO values) give the zero time.Time.
func (f Filetime) Time() time.Time {
	if f <= 0 {
		return time.Time{}
	}
	sec := int64(f)/1e7 - filetimeUnixEpochSeconds
	nsec := (int64(f) % 1e7) * 100
	return time.Unix(sec, nsec).UTC()
}
