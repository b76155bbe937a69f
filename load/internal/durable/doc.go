// Package durable makes what pos-load writes survive a crash: the data of
// the files it puts in place, and the renames that put them there, are
// synced before the run that wrote them says it is done. It writes
// nothing itself.
package durable
