package blob

import (
	"strconv"

	"github.com/google/uuid"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func newUUID() string { return uuid.NewString() }
