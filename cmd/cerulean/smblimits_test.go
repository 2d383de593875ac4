package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
)

func TestSMBLimitFlags(t *testing.T) {
	parse := func(args ...string) (app.SMBLimits, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := addSMBLimitFlags(fs)
		if err := fs.Parse(args); err != nil {
			return app.SMBLimits{}, err
		}
		return f.limits()
	}
	lim, err := parse()
	if err != nil || lim != (app.SMBLimits{MaxConns: 1024, MaxConnsPerAddr: 64, PreauthTimeout: 30 * time.Second, IdleTimeout: 15 * time.Minute}) {
		t.Fatalf("defaults: %+v %v", lim, err)
	}
	lim, err = parse("--smb-max-connections", "0", "--smb-max-connections-per-address", "8", "--smb-preauth-timeout", "5s", "--smb-idle-timeout", "0")
	if err != nil || lim != (app.SMBLimits{MaxConns: -1, MaxConnsPerAddr: 8, PreauthTimeout: 5 * time.Second, IdleTimeout: -1}) {
		t.Fatalf("set: %+v %v", lim, err)
	}
	t.Setenv("CERULEAN_SMB_IDLE_TIMEOUT", "1h")
	if lim, err = parse(); err != nil || lim.IdleTimeout != time.Hour {
		t.Fatalf("from the environment: %+v %v", lim, err)
	}
	for _, bad := range [][]string{{"--smb-idle-timeout", "soon"}, {"--smb-preauth-timeout", "-1s"}} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
