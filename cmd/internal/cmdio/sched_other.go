//go:build !linux

package cmdio

// batchSchedule is Linux's; elsewhere the default policy stays.
func batchSchedule() {}
