package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func parseNormalizer(raw json.RawMessage) ([]func(string) string, error) {
	ty, ok, err := componentType(raw)
	if !ok {
		return nil, err
	}
	switch ty {
	case "Sequence":
		var seq struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return nil, err
		}
		return parseSequence(seq.Normalizers, parseNormalizer)
	case "BertNormalizer":
		var b struct {
			CleanText    *bool `json:"clean_text"`
			Chinese      *bool `json:"handle_chinese_chars"`
			StripAccents *bool `json:"strip_accents"`
			Lowercase    *bool `json:"lowercase"`
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, err
		}
		clean, chinese, lower := orTrue(b.CleanText), orTrue(b.Chinese), orTrue(b.Lowercase)
		// strip_accents null follows lowercase, as in tokenizers.
		strip := lower
		if b.StripAccents != nil {
			strip = *b.StripAccents
		}
		return []func(string) string{func(s string) string { return bertNormalize(s, clean, chinese, strip, lower) }}, nil
	case "Lowercase":
		return []func(string) string{strings.ToLower}, nil
	case "StripAccents":
		return []func(string) string{stripAccents}, nil
	case "NFC":
		return []func(string) string{norm.NFC.String}, nil
	case "NFD":
		return []func(string) string{norm.NFD.String}, nil
	case "NFKC":
		return []func(string) string{norm.NFKC.String}, nil
	case "NFKD":
		return []func(string) string{norm.NFKD.String}, nil
	case "Strip":
		var st struct {
			Left  bool `json:"strip_left"`
			Right bool `json:"strip_right"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, err
		}
		return []func(string) string{func(s string) string {
			if st.Left {
				s = strings.TrimLeftFunc(s, unicode.IsSpace)
			}
			if st.Right {
				s = strings.TrimRightFunc(s, unicode.IsSpace)
			}
			return s
		}}, nil
	case "Prepend":
		var p struct {
			Prepend string `json:"prepend"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		return []func(string) string{func(s string) string {
			if s == "" {
				return s
			}
			return p.Prepend + s
		}}, nil
	case "Replace":
		var r struct {
			Pattern struct {
				String *string `json:"String"`
				Regex  *string `json:"Regex"`
			} `json:"pattern"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
		switch {
		case r.Pattern.String != nil:
			old := *r.Pattern.String
			if old == "" {
				return nil, errors.New("Replace: empty pattern")
			}
			return []func(string) string{func(s string) string { return strings.ReplaceAll(s, old, r.Content) }}, nil
		case r.Pattern.Regex != nil:
			re, err := compileOnig(*r.Pattern.Regex)
			if err != nil {
				return nil, fmt.Errorf("Replace: %w", err)
			}
			return []func(string) string{func(s string) string { return re.ReplaceAllLiteralString(s, r.Content) }}, nil
		}
		return nil, errors.New("Replace: no pattern")
	}
	return nil, unsupported("normalizer", ty)
}

func orTrue(b *bool) bool { return b == nil || *b }

func unsupported(what, ty string) error {
	if ty == "" {
		return fmt.Errorf("a %s without a type", what)
	}
	return fmt.Errorf("%s %q is not supported", what, ty)
}

// bertNormalize is tokenizers' BertNormalizer: control characters
// dropped and white space made a space, CJK ideographs set apart, accents
// stripped, lowercased.
func bertNormalize(s string, clean, chinese, strip, lower bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if clean {
			if r == 0 || r == utf8.RuneError || isBertControl(r) {
				continue
			}
			if r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r) {
				r = ' '
			}
		}
		if chinese && isCJK(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if strip {
		out = stripAccents(out)
	}
	if lower {
		out = strings.ToLower(out)
	}
	return out
}

func isBertControl(r rune) bool {
	if r < utf8.RuneSelf {
		return (r < 0x20 || r == 0x7f) && r != '\t' && r != '\n' && r != '\r'
	}
	// Category C: Cc, Cf, Co, Cs, and Cn (a code point Unicode has not
	// assigned: in no category).
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) ||
		!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

// stripAccents decomposes (NFD) and drops the non-spacing marks.
func stripAccents(s string) string {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii {
		return s
	}
	d := norm.NFD.String(s)
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, d)
}

func isBertPunct(r rune) bool {
	return r < 128 && unicode.IsPunct(r) || r < 128 && unicode.IsSymbol(r) || unicode.IsPunct(r)
}
