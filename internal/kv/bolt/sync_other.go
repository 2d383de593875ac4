//go:build !linux

package bolt

// sync makes the log's written records durable.
func (w *wal) sync() error { return w.f.Sync() }
