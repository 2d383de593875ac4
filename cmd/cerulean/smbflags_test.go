package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/smb"
)

// TestSMBSecurityFlags: --smb-require-signing and --smb-encrypt (and
// their CERULEAN_ variables) reach app.Config; a bad mode is a usage
// error naming the flag.
func TestSMBSecurityFlags(t *testing.T) {
	parse := func(args ...string) (app.Config, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := addSMBSecurityFlags(fs, "smb-require-signing", "smb-encrypt", true)
		if err := fs.Parse(args); err != nil {
			return app.Config{}, err
		}
		var cfg app.Config
		err := f.apply(&cfg)
		return cfg, err
	}
	cfg, err := parse()
	if err != nil || cfg.SMBRequireSigning || cfg.SMBEncrypt != smb.EncryptOff {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	cfg, err = parse("--smb-require-signing", "--smb-encrypt", "required")
	if err != nil || !cfg.SMBRequireSigning || cfg.SMBEncrypt != smb.EncryptRequired {
		t.Fatalf("flags: %v %v %v", cfg.SMBRequireSigning, cfg.SMBEncrypt, err)
	}
	if _, err = parse("--smb-encrypt", "always"); err == nil || !strings.Contains(err.Error(), "--smb-encrypt") {
		t.Fatalf("bad mode: %v", err)
	}
	t.Setenv("CERULEAN_SMB_REQUIRE_SIGNING", "true")
	t.Setenv("CERULEAN_SMB_ENCRYPT", "desired")
	cfg, err = parse()
	if err != nil || !cfg.SMBRequireSigning || cfg.SMBEncrypt != smb.EncryptDesired {
		t.Fatalf("env: %v %v %v", cfg.SMBRequireSigning, cfg.SMBEncrypt, err)
	}

	// The Azurite form.
	af, err := parseAzuriteFlags("azurite", []string{"--smbPort", "0", "--smbRequireSigning", "--smbEncrypt", "desired", "--inMemoryPersistence"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	acfg, _, closeLog, err := af.config(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	closeLog()
	if !acfg.SMBRequireSigning || acfg.SMBEncrypt != smb.EncryptDesired {
		t.Fatalf("azurite: %v %v", acfg.SMBRequireSigning, acfg.SMBEncrypt)
	}
	af, err = parseAzuriteFlags("azurite", []string{"--smbEncrypt", "yes", "--inMemoryPersistence"}, io.Discard)
	if err == nil {
		_, _, _, err = af.config(io.Discard)
	}
	if err == nil || !strings.Contains(err.Error(), "--smbEncrypt") {
		t.Fatalf("azurite bad mode: %v", err)
	}
}
