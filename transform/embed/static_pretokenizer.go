package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pos-lake/pos/internal/lazyre"
)

func parsePreTokenizer(raw json.RawMessage) ([]func([]string) []string, error) {
	ty, ok, err := componentType(raw)
	if !ok {
		return nil, err
	}
	switch ty {
	case "Sequence":
		var seq struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return nil, err
		}
		return parseSequence(seq.PreTokenizers, parsePreTokenizer)
	case "BertPreTokenizer":
		// White space splits and is dropped; punctuation splits and
		// stays, each mark a word of its own.
		return []func([]string) []string{eachWord(func(w string, out []string) []string {
			for _, f := range strings.Fields(w) {
				out = splitIsolated(f, isBertPunct, out)
			}
			return out
		})}, nil
	case "WhitespaceSplit":
		return []func([]string) []string{eachWord(func(w string, out []string) []string {
			return append(out, strings.Fields(w)...)
		})}, nil
	case "Whitespace":
		// The pattern \w+|[^\w\s]+.
		return []func([]string) []string{eachWord(func(w string, out []string) []string {
			return append(out, whitespaceRe().FindAllString(w, -1)...)
		})}, nil
	case "Punctuation":
		return []func([]string) []string{eachWord(func(w string, out []string) []string {
			return splitIsolated(w, isBertPunct, out)
		})}, nil
	case "Digits":
		var d struct {
			Individual bool `json:"individual_digits"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		return []func([]string) []string{eachWord(func(w string, out []string) []string {
			if d.Individual {
				return splitIsolated(w, unicode.IsDigit, out)
			}
			return splitRuns(w, unicode.IsDigit, out)
		})}, nil
	case "ByteLevel":
		// As model2vec leaves it in the tokenizers it writes: no
		// splitting pattern, each byte mapped to a printable character.
		var b struct {
			AddPrefixSpace *bool `json:"add_prefix_space"`
			UseRegex       *bool `json:"use_regex"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, err
		}
		if b.UseRegex == nil || *b.UseRegex {
			return nil, errors.New(`pre-tokenizer "ByteLevel" with use_regex is not supported`)
		}
		prefix := b.AddPrefixSpace == nil || *b.AddPrefixSpace
		return []func([]string) []string{eachWord(func(w string, out []string) []string {
			if prefix && !strings.HasPrefix(w, " ") {
				w = " " + w
			}
			var sb strings.Builder
			for i := 0; i < len(w); i++ {
				sb.WriteRune(byteRunes[w[i]])
			}
			return append(out, sb.String())
		})}, nil
	case "Metaspace":
		var m struct {
			Replacement    string `json:"replacement"`
			PrependScheme  string `json:"prepend_scheme"`
			AddPrefixSpace *bool  `json:"add_prefix_space"`
			Split          *bool  `json:"split"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		if m.Replacement == "" {
			m.Replacement = "▁"
		}
		prepend := m.PrependScheme != "never"
		if m.PrependScheme == "" && m.AddPrefixSpace != nil {
			prepend = *m.AddPrefixSpace
		}
		split := m.Split == nil || *m.Split
		rep := m.Replacement
		return []func([]string) []string{eachWord(func(w string, out []string) []string {
			w = strings.ReplaceAll(w, " ", rep)
			if prepend && !strings.HasPrefix(w, rep) {
				w = rep + w
			}
			if !split {
				return append(out, w)
			}
			// Each replacement starts a word (merged with the next).
			start := 0
			for i := 0; ; {
				j := strings.Index(w[i:], rep)
				if j < 0 {
					break
				}
				if i+j > start {
					out = append(out, w[start:i+j])
					start = i + j
				}
				i += j + len(rep)
			}
			if start < len(w) {
				out = append(out, w[start:])
			}
			return out
		})}, nil
	}
	return nil, unsupported("pre-tokenizer", ty)
}

var whitespaceRe = lazyre.New(onigToGo(`\w+|[^\w\s]+`))

// Oniguruma's shorthand classes (the regex engine tokenizers compiles
// patterns with) are Unicode-aware where Go's are ASCII only.
var onigClasses = map[byte]string{
	's': `\s\x0b\x{85}\p{Z}`,
	'd': `\p{Nd}`,
	'w': `\p{L}\p{M}\p{Nd}\p{Pc}`,
}

// onigToGo rewrites \s, \d and \w (and \S, \D, \W outside brackets) as
// the Unicode classes Oniguruma means by them; "" for a negated one
// inside brackets, which Go cannot express.
func onigToGo(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			e := p[i+1]
			i++
			if cls, ok := onigClasses[e]; ok {
				if inClass {
					b.WriteString(cls)
				} else {
					b.WriteString("[" + cls + "]")
				}
				continue
			}
			if cls, ok := onigClasses[e+'a'-'A']; ok && e >= 'A' && e <= 'Z' {
				if inClass {
					return ""
				}
				b.WriteString("[^" + cls + "]")
				continue
			}
			b.WriteByte(c)
			b.WriteByte(e)
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteByte(']') // a leading ] is a member
				i++
			}
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func compileOnig(p string) (*regexp.Regexp, error) {
	g := onigToGo(p)
	if g == "" {
		return nil, fmt.Errorf("pattern %q: a negated class in brackets is not supported", p)
	}
	return regexp.Compile(g)
}

// byteRunes is GPT-2's map of bytes to printable characters, which
// byte-level tokenizers' vocabularies are written in.
var byteRunes = func() (t [256]rune) {
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae {
			t[b] = rune(b)
		} else {
			t[b] = rune(256 + n)
			n++
		}
	}
	return t
}()

func eachWord(f func(string, []string) []string) func([]string) []string {
	return func(words []string) []string {
		var out []string
		for _, w := range words {
			out = f(w, out)
		}
		return out
	}
}

// splitIsolated cuts w before and after each rune that is, which stands
// alone.
func splitIsolated(w string, is func(rune) bool, out []string) []string {
	start := 0
	for i, r := range w {
		if is(r) {
			if start < i {
				out = append(out, w[start:i])
			}
			n := utf8.RuneLen(r)
			if n < 0 {
				n = 1
			}
			out = append(out, w[i:i+n])
			start = i + n
		}
	}
	if start < len(w) {
		out = append(out, w[start:])
	}
	return out
}

// splitRuns cuts w where is changes.
func splitRuns(w string, is func(rune) bool, out []string) []string {
	start, prev := 0, false
	for i, r := range w {
		c := is(r)
		if i > 0 && c != prev {
			out = append(out, w[start:i])
			start = i
		}
		prev = c
	}
	if start < len(w) {
		out = append(out, w[start:])
	}
	return out
}
