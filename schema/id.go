package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// ID derives a stable record id from its parts: the first 16 bytes of the
// SHA-256 of the parts joined by NUL, in hex. The same parts always give the
// same id, so re-extracting a file gives the same ids and loading is
// idempotent.
func ID(parts ...string) string {
	// The parts are joined in a buffer on the stack (a heap one past 256
	// bytes) and hashed in one call: no hash object, no copy per part.
	var buf [256]byte
	b := buf[:0]
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return idOf(b)
}

// idOf is the id of parts already joined.
func idOf(joined []byte) string {
	sum := sha256.Sum256(joined)
	var out [32]byte
	hex.Encode(out[:], sum[:16])
	return string(out[:])
}

// ContentHash is a fast 64-bit hash of a record's encoding, used to tell a
// changed version of a record from a repeat of the same one.
func ContentHash(b []byte) string {
	return strconv.FormatUint(xxhash.Sum64(b), 16)
}

// RawID is the id of a native record kept in the raw layer: where it is (its
// session, its file's name and directory's name, and its byte offset or row
// key) and what it is (a hash of its bytes, so a file rewritten in place
// does not alias the old record). The rest of the path is left out so that
// moving a history folder does not duplicate the raw layer.
func RawID(rec *Record) string {
	// ID(platform, "raw", session, base, offset[/key], ContentHash(raw)),
	// joined here without the strings between.
	var buf [256]byte
	b := append(buf[:0], rec.Platform...)
	b = append(b, "\x00raw\x00"...)
	b = append(b, rec.SessionID...)
	b = append(b, 0)
	if s := rec.Source; s != nil {
		b = appendRawBase(b, s.Path)
		b = append(b, 0)
		b = strconv.AppendInt(b, s.Offset, 10)
		if s.Key != "" {
			b = append(b, '/')
			b = append(b, s.Key...)
		}
	} else {
		b = append(b, 0)
	}
	b = append(b, 0)
	b = strconv.AppendUint(b, xxhash.Sum64(rec.Raw), 16)
	return idOf(b)
}

// appendRawBase appends the part of a source path a raw id keeps: its
// directory's name and its own, as filepath.Join(filepath.Base(
// filepath.Dir(path)), filepath.Base(path)) gives them. Every line of a
// file asks for the same one, so the common case (two plain names) is
// appended without building the joined string.
func appendRawBase(b []byte, path string) []byte {
	dir, base := filepath.Base(filepath.Dir(path)), filepath.Base(path)
	if plainName(dir) && plainName(base) {
		// Join of two names without separators or dot elements adds
		// one separator and cleans nothing.
		b = append(b, dir...)
		b = append(b, filepath.Separator)
		return append(b, base...)
	}
	return append(b, filepath.Join(dir, base)...)
}

// plainName reports whether a path element is a name filepath.Join keeps
// as it is: not empty, not "." or "..", without a separator.
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsRune(s, filepath.Separator)
}

// SessionRecordID is the id of a session's record: one per platform session.
func SessionRecordID(platform, session string) string {
	return ID(platform, "session", session)
}

// ExchangeID is the id of the exchange opened by the prompt with record id
// promptID: the same prompt always opens the same exchange, so an exchange
// re-derived by a later run replaces the earlier version.
func ExchangeID(platform, promptID string) string {
	return ID(platform, "exchange", promptID)
}

// SplitRaw returns the raw-layer record for a record's native record: the
// raw JSON with its provenance and the fields the raw layer is partitioned
// and filtered by.
func SplitRaw(rec *Record) *Record {
	r := New(KindRaw)
	r.Platform, r.SessionID = rec.Platform, rec.SessionID
	r.TS, r.TSPrecision = rec.TS, rec.TSPrecision
	r.NativeType, r.NativeID = rec.NativeType, rec.NativeID
	r.User, r.Machine, r.Project = rec.User, rec.Machine, rec.Project
	r.Completeness = rec.Completeness
	r.Source, r.Adapter, r.IngestedAt = rec.Source, rec.Adapter, rec.IngestedAt
	r.Raw = rec.Raw
	r.ID = RawID(r)
	return r
}
