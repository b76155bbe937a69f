package scrub

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MinKeyLen is the shortest key a Scrubber takes, in bytes: 256 bits, as
// much as HMAC-SHA256 can use. The key file's key is 64 hex digits.
const MinKeyLen = 32

// ErrShortKey is the error of a key shorter than MinKeyLen.
var ErrShortKey = errors.New("scrub: key too short")

// CheckKey says whether key can key the markers' hashes.
func CheckKey(key []byte) error {
	if len(key) < MinKeyLen {
		return fmt.Errorf("%w: %d bytes, want at least %d (a random key: head -c 32 /dev/urandom | xxd -p -c 64)", ErrShortKey, len(key), MinKeyLen)
	}
	return nil
}

// LoadKey returns the key kept in the file at path, creating the file
// with a new random key (32 bytes, hex) when it does not exist. The file is
// created readable by its owner only (0600) in a directory only its owner
// can enter (0700), since the key is what keeps a marker's hash from being
// reversed. A key file that others can read is refused.
func LoadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKey(path)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s: mode %v lets others read it (chmod 600 it)", path, fi.Mode().Perm())
	}
	k := bytes.TrimSpace(b)
	if len(k) == 0 {
		return nil, fmt.Errorf("key file %s is empty", path)
	}
	if err := CheckKey(k); err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return k, nil
}

func createKey(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	k := []byte(hex.EncodeToString(raw[:]))
	// Write the key under a temporary name, then link it into place: a run
	// started at the same time sees no key file or a whole one.
	f, err := os.CreateTemp(filepath.Dir(path), ".scrub-key-*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(append(k, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err != nil {
		return nil, err
	}
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return LoadKey(path) // another run made it first
	} else if err != nil {
		return nil, err
	}
	return k, nil
}
