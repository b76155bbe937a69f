package searchindex_test

import "github.com/pos-lake/pos/load/internal/indextest"

var chunk = indextest.Chunk
