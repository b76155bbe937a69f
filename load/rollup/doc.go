// Package rollup keeps what pos-load derives from the lake's files for the
// readers to read instead of them: the usage rollup (<lake>/rollup), the
// token sums pos-query stats counts, which a load brings up to date for
// the partitions it changed (UpdateRollup), and the rules of the session
// cache: the sessions view's counts in parts, per partition and session,
// stated once as rules that make both their SQL (SessionPartsSQL,
// SessionsSQL, which the catalog's sessions view is made of) and their
// computation in Go (WriteSessionParts, WriteSessionMeta), which query
// keeps beside the lake.
//
// It reads the lake through package layout and never links pos-load's
// writer (package load).
package rollup
