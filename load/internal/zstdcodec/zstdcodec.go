// Package zstdcodec is the ZSTD codec pos-load compresses with: the
// pages of the Parquet files it writes (Page, a parquet-go codec) and the
// text blocks of the vector sidecars (Page.EncodeAll). Its encoders live
// as long as the process, one per core.
package zstdcodec

import (
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// Codec is parquet's ZSTD codec on long-lived encoders. parquet-go's own
// codec keeps its encoders in a pool the garbage collector empties, and
// each new encoder allocates its history window again, a large part of
// pos-load's work. There is one encoder (and decoder) per core: a call
// waits for a free one, and pos-load's two lanes compress at once.
type Codec struct {
	once sync.Once
	enc  *zstd.Encoder
	dec  *zstd.Decoder
}

// Page is the codec of every file pos-load compresses.
var Page Codec

func (c *Codec) init() {
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

func (c *Codec) String() string                            { return "ZSTD" }
func (c *Codec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *Codec) Encode(dst, src []byte) ([]byte, error) {
	c.init()
	return c.enc.EncodeAll(src, dst[:0]), nil
}

func (c *Codec) Decode(dst, src []byte) ([]byte, error) {
	c.init()
	return c.dec.DecodeAll(src, dst[:0])
}

// EncodeAll compresses src, appending it to dst, as a single frame.
func (c *Codec) EncodeAll(src, dst []byte) []byte {
	c.init()
	return c.enc.EncodeAll(src, dst)
}
