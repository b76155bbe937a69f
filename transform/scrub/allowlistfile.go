package scrub

import (
	"fmt"
	"os"
)

// ReadAllowlist reads the allowlist file at path; a line it cannot read is
// an error that names the file and the line.
func ReadAllowlist(path string) (*Allowlist, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := ParseAllowlist(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}
