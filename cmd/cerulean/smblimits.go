package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/smb"
)

// smbLimitFlags are the serve flags bounding what SMB clients may hold
// (docs/smb.md, "Connection limits"). On the command line 0 removes a
// limit; app.SMBLimits takes a negative value for that.
type smbLimitFlags struct {
	maxConns, maxPerAddr *int
	preauth, idle        *string
}

func addSMBLimitFlags(fs *flag.FlagSet) smbLimitFlags {
	return smbLimitFlags{
		maxConns: fs.Int("smb-max-connections", envInt("smb-max-connections", smb.DefaultMaxConns),
			"most SMB connections at once; more are closed as they arrive, 0 for no cap (env CERULEAN_SMB_MAX_CONNECTIONS)"),
		maxPerAddr: fs.Int("smb-max-connections-per-address", envInt("smb-max-connections-per-address", smb.DefaultMaxConnsPerAddr),
			"most SMB connections from one IP address, 0 for no cap (env CERULEAN_SMB_MAX_CONNECTIONS_PER_ADDRESS)"),
		preauth: fs.String("smb-preauth-timeout", env("smb-preauth-timeout", smb.DefaultPreauthTimeout.String()),
			"close an SMB connection that has not logged on this long after connecting, 0 never (env CERULEAN_SMB_PREAUTH_TIMEOUT)"),
		idle: fs.String("smb-idle-timeout", env("smb-idle-timeout", smb.DefaultIdleTimeout.String()),
			"close a logged-on SMB connection with no open file that has sent nothing for this long, 0 never (env CERULEAN_SMB_IDLE_TIMEOUT)"),
	}
}

// limits returns the flags as app.SMBLimits.
func (f smbLimitFlags) limits() (app.SMBLimits, error) {
	noCap := func(n int) int {
		if n <= 0 {
			return -1
		}
		return n
	}
	dur := func(name, v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("--%s %q: want a duration such as 30s or 15m, 0 for none", name, v)
		}
		if d == 0 {
			return -1, nil
		}
		return d, nil
	}
	lim := app.SMBLimits{MaxConns: noCap(*f.maxConns), MaxConnsPerAddr: noCap(*f.maxPerAddr)}
	var err error
	if lim.PreauthTimeout, err = dur("smb-preauth-timeout", *f.preauth); err != nil {
		return lim, err
	}
	if lim.IdleTimeout, err = dur("smb-idle-timeout", *f.idle); err != nil {
		return lim, err
	}
	return lim, nil
}
