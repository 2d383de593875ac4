package app

import (
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/smb"
)

// The SMB front end takes the File service's VFS through the interface
// it defines (smb.FileSystem); the build fails here if the VFS drifts
// from it.
var _ smb.FileSystem = (*file.VFS)(nil)
