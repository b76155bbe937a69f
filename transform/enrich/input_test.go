package enrich

import (
	"slices"
	"testing"

	"github.com/bytedance/sonic"
	"github.com/pos-lake/pos/internal/jsontext/fastjson"
)

// testFast skips values with sonic, as pos-normalize does.
var testFast = fastjson.New()

// FuzzInput: a tool input decodes with the walker as it did with sonic's
// compiled decoders (the reference below): the same members, strings,
// argv and edits, and the same inputs refused.
func FuzzInput(f *testing.F) {
	for _, s := range []string{
		`{"command":"cat a.go > b.go","cwd":"/w"}`,
		`{"command":["bash","-lc","rm x"],"workdir":null}`,
		`{"cmd":["git","add",null]}`,
		`{"file_path":"a","file_path":7,"path":"\u00e9\ud800"}`,
		`{"edits":[{"file_path":"x","path":1},null,{"path":"y","path":null}]}`,
		`{"edits":[1]}`,
		`{"a":[1,2,}`,
		`{"dir":"d"} x`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, got, ok := decodeBoth[map[string]sonic.NoCopyRawMessage](t, b, "members", b, func(b []byte) (map[string][]byte, bool) {
			return inputMembers(testFast, b)
		})
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d members, sonic %d", b, len(got), len(want))
		}
		for k, v := range want {
			if string(got[k]) != string(v) {
				t.Fatalf("%q: member %q is %q, sonic %q", b, k, got[k], v)
			}
			if s, gs, ok := decodeBoth[string](t, b, "string", got[k], jsonString); ok && gs != s {
				t.Fatalf("%q: string %q, sonic %q", b, gs, s)
			}
			if argv, ga, ok := decodeBoth[[]string](t, b, "argv", got[k], jsonStrings); ok && !slices.Equal(ga, argv) {
				t.Fatalf("%q: argv %q, sonic %q", b, ga, argv)
			}
			edits, ge, eok := decodeBoth[[]map[string]any](t, b, "edits", got[k], func(v []byte) ([]map[string]string, bool) {
				return editStrings(testFast, v)
			})
			if !eok {
				continue
			}
			if len(ge) != len(edits) {
				t.Fatalf("%q: %d edits, sonic %d", b, len(ge), len(edits))
			}
			for i := range ge {
				strs := 0
				for key, val := range edits[i] {
					s, isStr := val.(string)
					if gv, has := ge[i][key]; has != isStr || gv != s {
						t.Fatalf("%q: edit %d member %q is %q (%v), sonic %v", b, i, key, gv, has, val)
					}
					if isStr {
						strs++
					}
				}
				if strs != len(ge[i]) {
					t.Fatalf("%q: edit %d has %d strings, sonic %d", b, i, len(ge[i]), strs)
				}
			}
		}
	})
}

// sonicAPI is the reference decoder FuzzInput compares the walker with.
var sonicAPI = sonic.Config{}.Froze()

// decodeBoth decodes v, a value of the tool input b, with sonic into a W
// and with walk; it fails the test when one refuses what the other
// accepts.
func decodeBoth[W, G any](t *testing.T, b []byte, what string, v []byte, walk func([]byte) (G, bool)) (want W, got G, ok bool) {
	t.Helper()
	err := sonicAPI.Unmarshal(v, &want)
	if got, ok = walk(v); ok != (err == nil) {
		t.Fatalf("%q: %s ok %v, sonic error %v", b, what, ok, err)
	}
	return want, got, ok
}
