package load

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// populate maps the pages of b, a part of a mapped file, at once: a
// search that reads all of a region (the vectors of a file) pays one
// call for it instead of a fault per few pages, and only for the regions
// it reads (the metadata and texts of a segment mostly are not).
func populate(b []byte) {
	if len(b) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	back := int(uintptr(p) % uintptr(os.Getpagesize()))
	// The range starts at its page, which is within the mapping.
	whole := unsafe.Slice((*byte)(unsafe.Add(p, -back)), back+len(b))
	_ = unix.Madvise(whole, unix.MADV_POPULATE_READ) // an older kernel: faults as read
}
