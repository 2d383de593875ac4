package blob

import (
	"strconv"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/svcprops"
	"github.com/google/uuid"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func newUUID() string { return uuid.NewString() }

func loadServiceProps(tx kv.Tx, acct string) (svcprops.Properties, error) {
	return svcprops.Load(tx, servicePropsKey(acct), svcprops.Blob)
}
