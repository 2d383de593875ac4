package main

import (
	"flag"
	"fmt"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/smb"
)

// smbSecurityFlags are the SMB hardening options, on `cerulean serve`
// (--smb-require-signing, --smb-encrypt, with CERULEAN_SMB_REQUIRE_SIGNING
// and CERULEAN_SMB_ENCRYPT) and the Azurite command lines
// (--smbRequireSigning, --smbEncrypt).
type smbSecurityFlags struct {
	requireSigning *bool
	encrypt        *string
	encryptName    string
}

// addSMBSecurityFlags defines the flags on fs under the names given; with
// withEnv their defaults come from the CERULEAN_ variables of the names.
func addSMBSecurityFlags(fs *flag.FlagSet, signName, encName string, withEnv bool) *smbSecurityFlags {
	sign, enc := false, "off"
	signHelp := "SMB: require every session to sign (or encrypt) its requests; NEGOTIATE says SIGNING_REQUIRED"
	encHelp := "SMB 3 encryption: off, desired (encrypt the sessions of clients that can) or required (refuse the others)"
	if withEnv {
		v := env(signName, "")
		sign = v == "true" || v == "1"
		enc = env(encName, enc)
		signHelp += " (env CERULEAN_SMB_REQUIRE_SIGNING)"
		encHelp += " (env CERULEAN_SMB_ENCRYPT)"
	}
	return &smbSecurityFlags{
		requireSigning: fs.Bool(signName, sign, signHelp),
		encrypt:        fs.String(encName, enc, encHelp),
		encryptName:    encName,
	}
}

// apply sets the SMB hardening options of cfg.
func (f *smbSecurityFlags) apply(cfg *app.Config) error {
	mode, err := smb.ParseEncryptMode(*f.encrypt)
	if err != nil {
		return fmt.Errorf("--%s: %w", f.encryptName, err)
	}
	cfg.SMBRequireSigning, cfg.SMBEncrypt = *f.requireSigning, mode
	return nil
}
