package load

import (
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdCodec is parquet's ZSTD codec on long-lived encoders. parquet-go's
// own codec keeps its encoders in a pool the garbage collector empties, and
// each new encoder allocates its history window again: a fifth of pos-load's
// time went to that. There is one encoder (and decoder) per core: a call
// waits for a free one, and pos-load's two lanes compress at once.
type zstdCodec struct {
	once sync.Once
	enc  *zstd.Encoder
	dec  *zstd.Decoder
}

var pageCodec zstdCodec

// metaDecoder decodes a sidecar's text blocks into a buffer of the size
// the sidecar gives them, and no further (WithDecodeAllCapLimit): the
// sizes come from the same file as the blocks, so a damaged one is refused
// rather than trusted.
var metaDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithDecodeAllCapLimit(true))
})

func (c *zstdCodec) init() {
	c.once.Do(func() {
		var err error
		c.enc, err = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false),
			zstd.WithWindowSize(1<<20), // pages are small; a smaller window is less to clear
		)
		if err != nil {
			panic(err)
		}
		c.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)))
		if err != nil {
			panic(err)
		}
	})
}

func (c *zstdCodec) String() string                            { return "ZSTD" }
func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	c.init()
	return c.enc.EncodeAll(src, dst[:0]), nil
}

func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	c.init()
	return c.dec.DecodeAll(src, dst[:0])
}
