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
	api := sonic.Config{}.Froze()
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]sonic.NoCopyRawMessage
		werr := api.Unmarshal(b, &want)
		got, ok := inputMembers(testFast, b)
		if ok != (werr == nil) {
			t.Fatalf("%q: walker ok %v, sonic error %v", b, ok, werr)
		}
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
			var s string
			serr := api.Unmarshal(v, &s)
			gs, gok := jsonString(got[k])
			if gok != (serr == nil) || (gok && gs != s) {
				t.Fatalf("%q: string %q ok %v, sonic %q %v", b, gs, gok, s, serr)
			}
			var argv []string
			aerr := api.Unmarshal(v, &argv)
			ga, aok := jsonStrings(got[k])
			if aok != (aerr == nil) || (aok && !slices.Equal(ga, argv)) {
				t.Fatalf("%q: argv %q ok %v, sonic %q %v", b, ga, aok, argv, aerr)
			}
			var edits []map[string]any
			eerr := api.Unmarshal(v, &edits)
			ge, eok := editStrings(testFast, got[k])
			if eok != (eerr == nil) {
				t.Fatalf("%q: edits ok %v, sonic %v", b, eok, eerr)
			}
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
