//go:build !unix

package extract

import "os"

// openFlags adds nothing where open(2) has no O_NONBLOCK or O_NOFOLLOW:
// the type checks before and after the open stand alone.
func openFlags(bool) int { return 0 }

func setBlocking(*os.File) error { return nil }

func openDir(dir string) (*os.File, error) { return os.Open(dir) }
