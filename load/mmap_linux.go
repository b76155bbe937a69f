package load

import "syscall"

// mapPopulate has mapFile map a file's pages up front.
const mapPopulate = syscall.MAP_POPULATE
