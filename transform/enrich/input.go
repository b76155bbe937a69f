package enrich

import "github.com/pos-lake/pos/internal/jsontext"

// A tool's input is read with jsontext.Reader, not a compiled decoder: each
// input is small and read once, and compiling sonic's decoders for these
// types would cost every pos-normalize of a small incremental sync more
// than it saves. They decode as sonic (and encoding/json) do: the last
// member of a key holds, and a value of another type than the one asked
// for is refused.

// inputMembers returns the members of a JSON object, each value as it is
// written (null as "null"), or false when input is not one. f skips the
// values (nil: in Go).
func inputMembers(f *jsontext.Fast, input []byte) (map[string][]byte, bool) {
	in := map[string][]byte{}
	err := f.Walk(input, func(w *jsontext.Reader) error {
		return w.Object(func(key string) error {
			v, err := w.Raw()
			in[key] = v
			return err
		})
	})
	return in, err == nil
}

// jsonString decodes a JSON string (null: ""), or reports false.
func jsonString(v []byte) (string, bool) {
	var s string
	err := jsontext.Walk(v, func(w *jsontext.Reader) (err error) {
		s, err = w.Str()
		return err
	})
	return s, err == nil
}

// jsonStrings decodes an array of strings (a null element: ""; null:
// none), or reports false.
func jsonStrings(v []byte) ([]string, bool) {
	var out []string
	err := jsontext.Walk(v, func(w *jsontext.Reader) error {
		if w.Null() {
			return nil
		}
		return w.Array(func() error {
			s, err := w.Str()
			out = append(out, s)
			return err
		})
	})
	return out, err == nil
}

// editStrings decodes an array of objects (null, or a null element: none), keeping
// each object's string members, or reports false. A key whose last member
// is not a string is left out, as a type check on the decoded value
// would. f skips the other members (nil: in Go).
func editStrings(f *jsontext.Fast, v []byte) ([]map[string]string, bool) {
	var out []map[string]string
	err := f.Walk(v, func(w *jsontext.Reader) error {
		if w.Null() {
			return nil
		}
		return w.Array(func() error {
			if w.Null() {
				out = append(out, nil)
				return nil
			}
			e := map[string]string{}
			out = append(out, e)
			return w.Object(func(key string) error {
				if w.Next() != '"' {
					delete(e, key)
					return w.Skip()
				}
				s, err := w.Str()
				e[key] = s
				return err
			})
		})
	})
	return out, err == nil
}
