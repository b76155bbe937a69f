package jsontext

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain ascii text that is long enough", "tab\there \"quoted\" back\\slash", "ctl\x01\x1f\x7f",
		"日本語のテキスト and ascii", "bad \xff utf8 \xc3", "<html>&amp;</html>", strings.Repeat("abcdefg\"", 9), "\u2028\u2029"} {
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, got, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want {
			t.Fatalf("%q -> %s -> %q", s, got, back)
		}
	}
}

// BenchmarkAppendString escapes text like a transcript's: code with
// newlines, tabs and quotes, some non-ASCII prose, long plain runs.
func BenchmarkAppendString(b *testing.B) {
	var sb strings.Builder
	for i := range 200 {
		sb.WriteString("func main() {\n\tfmt.Println(\"hello, world\")\n\tx := map[string]int{\"a\": 1}\n}\n")
		sb.WriteString("The build failed because the path C:\\\\tmp\\\\out was not found; retry with --verbose.\n")
		if i%10 == 0 {
			sb.WriteString("日本語のテキストと émoji ✓ mixed in.\n")
		}
		sb.WriteString(strings.Repeat("plain words without anything to escape ", 4))
	}
	s := sb.String()
	buf := make([]byte, 0, 2*len(s))
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}

// AppendString on random strings dense in the bytes that need escaping,
// at every alignment: valid JSON that decodes to the string.
func TestAppendStringRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab \"\\\n\t\x01\x1f\x7f\xc3\xa9\xe6\x97\xa5\xff")
	for range 20000 {
		n := r.IntN(40)
		b := make([]byte, n)
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = byte('a' + r.IntN(26))
			}
		}
		s := string(b)
		got := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, got, err)
		}
		// As encoding/json: each invalid byte becomes U+FFFD.
		std, _ := json.Marshal(s)
		var want string
		json.Unmarshal(std, &want)
		if back != want {
			t.Fatalf("%q -> %s -> %q, want %q", s, got, back, want)
		}
	}
}

// Simple agrees with encoding/json on every byte after a backslash.
func TestSimple(t *testing.T) {
	for c := range 256 {
		got, ok := Simple(byte(c))
		var want string
		err := json.Unmarshal([]byte(`"\`+string(rune(c))+`"`), &want)
		isSimple := err == nil && c != 'u' && len(want) == 1
		if ok != isSimple || ok && got != want[0] {
			t.Errorf(`\%c: Simple = %q, %v; encoding/json: %q, %v`, c, got, ok, want, err)
		}
	}
}
