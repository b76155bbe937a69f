package schema

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRoundTrip: whatever the decoder accepts re-encodes to a fixed point.
func FuzzRoundTrip(f *testing.F) {
	for _, name := range []string{"extract.golden.ndjson", "normalize.golden.ndjson"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "claude", name))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f.Add(append([]byte(nil), sc.Bytes()...))
		}
	}
	f.Add([]byte(`{"kind":"message","text":"\ud800 \u00e9 \"q\"","zz":[1,{"a":null}],"aa":1e400}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r Record
		if UnmarshalWith(testFast, data, &r) != nil {
			return
		}
		fixedPoint(t, &r)
	})
}

// FuzzDecoder: a stream of any bytes never panics, and every record the
// decoder yields re-encodes.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte("{\"kind\":\"raw\"}\n\n{bad\n{\"kind\":\"message\",\"raw\":{\"a\":[1,2]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for r, err := range NewDecoder(bytes.NewReader(data)).All() {
			if err != nil {
				continue
			}
			var back Record
			if err := UnmarshalWith(testFast, AppendRecord(nil, r), &back); err != nil {
				t.Fatal(err)
			}
		}
	})
}
