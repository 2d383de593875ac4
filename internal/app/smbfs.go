package app

import (
	"github.com/cerulean-storage/cerulean/internal/smb"
	"github.com/cerulean-storage/cerulean/internal/smb/smbfs"
)

// The SMB front end takes the File service's SMB view (smbfs.VFS, over
// the domain's file.Opens) through the interface it defines
// (smb.FileSystem); the build fails here if the view drifts from it.
var _ smb.FileSystem = (*smbfs.VFS)(nil)
