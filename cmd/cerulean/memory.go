package main

import (
	"fmt"
	"math"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// configureMemory selects the in-memory store (Azurite's
// --inMemoryPersistence) with a body limit of limitMiB megabytes
// (Azurite's --extentMemoryLimit, in MiB; negative: the default, half of
// RAM).
func configureMemory(cfg *app.Config, limitMiB float64) error {
	cfg.InMemory = true
	if limitMiB < 0 {
		return nil
	}
	bytes := limitMiB * (1 << 20)
	if limitMiB == 0 || math.IsNaN(bytes) || math.IsInf(bytes, 0) || bytes >= math.MaxInt64 || bytes < 1 {
		return fmt.Errorf("--extentMemoryLimit %v: want a positive number of megabytes", limitMiB)
	}
	cfg.ExtentMemoryLimit = int64(bytes)
	return nil
}
