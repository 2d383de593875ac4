package wire

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// Name length limits (Naming and referencing containers, blobs, and metadata,
// https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata).
const (
	MinContainerNameLen = 3
	MaxContainerNameLen = 63
	MaxBlobNameLen      = 1024
)

// nameLengthMessage is the real service's message for a name whose length is
// out of bounds (recorded Windows-Azure-Blob response, Azure/LogicAppsUX#3470).
const nameLengthMessage = "The specified resource name length is not within the permissible limits."

func nameLengthError() *azerr.Error {
	return azerr.Newf(azerr.OutOfRangeInput, nameLengthMessage)
}

// ValidContainerName checks a container name: 3–63 characters, lowercase
// ASCII letters, digits and single dashes, starting and ending with a letter
// or digit (same page). The system containers $root, $logs and $web are
// allowed.
//
// A length outside 3–63 is 400 OutOfRangeInput ("The specified resource name
// length is not within the permissible limits."), the real service's answer
// (Azure/LogicAppsUX#3470 recorded response; Azurite validateContainerName).
// Any other violation is 400 InvalidResourceName (Common REST API error
// codes; Azurite answers the same).
func ValidContainerName(name string) error {
	switch name {
	case "$root", "$logs", "$web":
		return nil
	}
	return validLowerDashName(name)
}

// ValidNewContainerName checks the name of a container a client creates
// (Create Container, Filesystem - Create): a valid container name other
// than $logs. $logs is Storage Analytics' container, written by the
// service alone ("Storage Analytics logging": logs go to the $logs
// container, created when logging is enabled, which cannot be deleted;
// Azure/azure-sdk-for-node#808: "Can't create it, but the azure logging
// stuff will create container named $logs"); a client creating it is
// 400 InvalidResourceName (the code is inferred: the name is outside the
// client naming rules, which only the system containers escape). $root
// and $web may be created ($root explicitly, "Working with the root
// container"; $web as static website hosting does).
func ValidNewContainerName(name string) error {
	if err := ReservedContainer(name); err != nil {
		return err
	}
	return ValidContainerName(name)
}

// ReservedContainer refuses the name of a container no client creates,
// $logs (ValidNewContainerName): the Blob domain checks it on every
// Create Container, whichever front door calls it.
func ReservedContainer(name string) error {
	if name == "$logs" {
		return azerr.Newf(azerr.InvalidResourceName, "The specified resource name contains invalid characters. The $logs container is reserved for Storage Analytics.")
	}
	return nil
}

// ValidShareName checks a File share name; the rules are the container rules
// without the $-system names (Naming and referencing shares, directories,
// files, and metadata,
// https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-shares--directories--files--and-metadata).
func ValidShareName(name string) error { return validLowerDashName(name) }

// ValidQueueName checks a queue name; the rules are the container rules
// without the $-system names. Length errors are 400 OutOfRangeInput, other
// violations 400 InvalidResourceName (Naming queues and metadata,
// https://learn.microsoft.com/en-us/rest/api/storageservices/naming-queues-and-metadata;
// Azurite answers the same).
func ValidQueueName(name string) error { return validLowerDashName(name) }

func validLowerDashName(name string) error {
	if len(name) < MinContainerNameLen || len(name) > MaxContainerNameLen {
		return nameLengthError()
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if i == 0 || i == len(name)-1 || name[i-1] == '-' {
				return azerr.New(azerr.InvalidResourceName)
			}
		default:
			return azerr.New(azerr.InvalidResourceName)
		}
	}
	return nil
}

// ValidBlobName checks a (percent-decoded) blob name. Azure allows any
// characters (Naming and referencing containers, blobs, and metadata); the
// only rule enforced is the length: 1 to 1024 characters, counted in UTF-16
// code units as the service does (a name of 512 emoji is the longest accepted
// (Azure/azure-storage-cpp#291)). Out of bounds is 400 OutOfRangeInput ("One
// of the request inputs is out of range." on the real service
// (Azure/azure-storage-cpp#291, azure-powershell#16628, Azurite#398); the
// message used here is the resource-name-length one). Invalid UTF-8 cannot be
// a name and is 400 InvalidResourceName (inferred). Trailing dots or slashes
// are legal but discouraged (same page), so they are accepted.
func ValidBlobName(name string) error {
	if name == "" {
		return nameLengthError()
	}
	if !utf8.ValidString(name) {
		return azerr.New(azerr.InvalidResourceName)
	}
	if utf16Len(name) > MaxBlobNameLen {
		return nameLengthError()
	}
	return nil
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
