package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/pos-lake/pos/internal/lazyre"
)

// tokenizer is the part of a Hugging Face tokenizers pipeline
// (tokenizer.json) that a model2vec model needs: added tokens, the
// normalizer, the pre-tokenizer and the model, giving token ids without
// special tokens (model2vec encodes with add_special_tokens=False), with
// no offsets and no post-processing.
//
// It reads what model2vec models ship: the BERT-style tokenizers of the
// first potion models (BertNormalizer, BertPreTokenizer, WordPiece) and
// the Unigram tokenizers that newer model2vec distillations write
// (a Sequence of normalizers with Replace and Strip, a Metaspace
// pre-tokenizer, a Unigram model; ByteLevel without its pattern for
// byte-level teachers). Normalizers: BertNormalizer,
// Lowercase, Strip, StripAccents, NFC, NFD, NFKC, NFKD, Replace, Prepend,
// Sequence; pre-tokenizers: BertPreTokenizer, Whitespace, WhitespaceSplit,
// Metaspace, ByteLevel (use_regex false), Punctuation, Digits, Sequence; models: WordPiece, Unigram,
// WordLevel. Anything else is refused by name at load time, never
// tokenized differently in silence.
type tokenizer struct {
	normalizers []func(string) string
	pre         []func([]string) []string
	model       tokenModel
	unk         int // the unknown token's id, -1 when none
	vocabSize   int // one more than the largest id
	maxID       int // ids must be below
	added       []addedToken
	first       [2][256]bool // bytes an added token starts with, [normalized]
	tokens      []string     // by id, for the median token length
}

type tokenModel interface {
	tokenize(word string, out []int) []int
}

type addedToken struct {
	id         int
	content    string
	normalized bool
}

// tokenizerJSON is the subset of tokenizer.json read.
type tokenizerJSON struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
}

// maxVocab bounds a vocabulary's ids, so that a corrupt file cannot ask
// for a huge table; an id must also be below the file's size in bytes
// (each token takes some), which a vocabulary of dense ids always is.
const maxVocab = 1 << 24

// parseTokenizer reads a tokenizer.json.
func parseTokenizer(data []byte) (*tokenizer, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, err
	}
	t := &tokenizer{unk: -1, maxID: min(maxVocab, len(data))}
	var err error
	if t.normalizers, err = parseNormalizer(tj.Normalizer); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if t.pre, err = parsePreTokenizer(tj.PreTokenizer); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	if len(tj.Model) == 0 || string(tj.Model) == "null" {
		return nil, errors.New("no model")
	}
	if err := t.parseModel(tj.Model); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	for _, a := range tj.AddedTokens {
		if a.Content == "" || a.ID < 0 || a.ID >= t.maxID {
			return nil, fmt.Errorf("added token %q: bad id %d", a.Content, a.ID)
		}
		t.added = append(t.added, addedToken{id: a.ID, content: a.Content, normalized: a.Normalized})
		t.first[b2i(a.Normalized)][a.Content[0]] = true
		t.setToken(a.ID, a.Content)
	}
	// Longest first: the leftmost match is the longest, as in tokenizers.
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })
	return t, nil
}

func (t *tokenizer) setToken(id int, s string) {
	if id >= len(t.tokens) {
		t.tokens = append(t.tokens, make([]string, id+1-len(t.tokens))...)
	}
	t.tokens[id] = s
	t.vocabSize = max(t.vocabSize, id+1)
}

// encode returns the ids of a text's tokens, special tokens included
// only where the text itself contains them, as tokenizers'
// encode(text, add_special_tokens=False) does.
func (t *tokenizer) encode(text string) []int {
	var out []int
	for _, part := range t.splitAdded(text, false) {
		if part.id >= 0 {
			out = append(out, part.id)
			continue
		}
		s := part.text
		for _, n := range t.normalizers {
			s = n(s)
		}
		for _, p := range t.splitAdded(s, true) {
			if p.id >= 0 {
				out = append(out, p.id)
				continue
			}
			words := []string{p.text}
			for _, pre := range t.pre {
				words = pre(words)
			}
			for _, w := range words {
				if w != "" {
					out = t.model.tokenize(w, out)
				}
			}
		}
	}
	return out
}

type addedPiece struct {
	text string
	id   int // an added token's id, or -1 for text
}

// splitAdded cuts out the added tokens (those matched before
// normalization, or after when normalized is true).
func (t *tokenizer) splitAdded(s string, normalized bool) []addedPiece {
	var out []addedPiece
	start := 0
	first := &t.first[b2i(normalized)]
	for i := 0; i < len(s); {
		if !first[s[i]] {
			i++
			continue
		}
		matched := false
		for _, a := range t.added {
			if a.normalized == normalized && strings.HasPrefix(s[i:], a.content) {
				if start < i {
					out = append(out, addedPiece{s[start:i], -1})
				}
				out = append(out, addedPiece{a.content, a.id})
				i += len(a.content)
				start, matched = i, true
				break
			}
		}
		if !matched {
			_, n := utf8.DecodeRuneInString(s[i:])
			i += n
		}
	}
	if start < len(s) {
		out = append(out, addedPiece{s[start:], -1})
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

type typed struct {
	Type string `json:"type"`
}

func parseNormalizer(raw json.RawMessage) ([]func(string) string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return nil, err
	}
	switch ty.Type {
	case "Sequence":
		var seq struct {
			Normalizers []json.RawMessage `json:"normalizers"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return nil, err
		}
		var out []func(string) string
		for _, n := range seq.Normalizers {
			fs, err := parseNormalizer(n)
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
		}
		return out, nil
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
	return nil, unsupported("normalizer", ty.Type)
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

func parsePreTokenizer(raw json.RawMessage) ([]func([]string) []string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return nil, err
	}
	switch ty.Type {
	case "Sequence":
		var seq struct {
			PreTokenizers []json.RawMessage `json:"pretokenizers"`
		}
		if err := json.Unmarshal(raw, &seq); err != nil {
			return nil, err
		}
		var out []func([]string) []string
		for _, p := range seq.PreTokenizers {
			fs, err := parsePreTokenizer(p)
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
		}
		return out, nil
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
	return nil, unsupported("pre-tokenizer", ty.Type)
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

func (t *tokenizer) parseModel(raw json.RawMessage) error {
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return err
	}
	switch ty.Type {
	case "WordPiece", "WordLevel", "":
		var m struct {
			Vocab    map[string]int `json:"vocab"`
			Unk      string         `json:"unk_token"`
			Prefix   *string        `json:"continuing_subword_prefix"`
			MaxChars int            `json:"max_input_chars_per_word"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		if ty.Type == "" {
			// tokenizers tells a WordPiece model by its fields.
			if m.Prefix == nil {
				return unsupported("model", "")
			}
			ty.Type = "WordPiece"
		}
		if len(m.Vocab) == 0 {
			return errors.New("empty vocabulary")
		}
		for tok, id := range m.Vocab {
			if id < 0 || id >= t.maxID {
				return fmt.Errorf("token %q: bad id %d", tok, id)
			}
			t.setToken(id, tok)
		}
		unk := -1
		if m.Unk != "" {
			id, ok := m.Vocab[m.Unk]
			if !ok {
				return fmt.Errorf("unk_token %q is not in the vocabulary", m.Unk)
			}
			unk = id
		}
		t.unk = unk
		if ty.Type == "WordLevel" {
			t.model = &wordLevel{vocab: m.Vocab, unk: unk}
			return nil
		}
		prefix := "##"
		if m.Prefix != nil {
			prefix = *m.Prefix
		}
		if m.MaxChars <= 0 {
			m.MaxChars = 100
		}
		t.model = &wordPiece{vocab: m.Vocab, unk: unk, prefix: prefix, maxChars: m.MaxChars}
		return nil
	case "Unigram":
		var m struct {
			Vocab        [][2]json.RawMessage `json:"vocab"`
			UnkID        *int                 `json:"unk_id"`
			ByteFallback bool                 `json:"byte_fallback"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		if len(m.Vocab) == 0 {
			return errors.New("empty vocabulary")
		}
		u := &unigram{unk: -1, byteFallback: m.ByteFallback, trie: map[uint64]int32{}, pieceID: map[int32]int{}}
		u.minScore = 0
		for id, e := range m.Vocab {
			var tok string
			var score float64
			if err := json.Unmarshal(e[0], &tok); err != nil {
				return fmt.Errorf("vocab %d: %w", id, err)
			}
			if err := json.Unmarshal(e[1], &score); err != nil {
				return fmt.Errorf("vocab %d: %w", id, err)
			}
			t.setToken(id, tok)
			u.add(tok, id, score)
			if id == 0 || score < u.minScore {
				u.minScore = score
			}
		}
		if m.UnkID != nil {
			if *m.UnkID < 0 || *m.UnkID >= len(m.Vocab) {
				return fmt.Errorf("unk_id %d is not in the vocabulary", *m.UnkID)
			}
			u.unk = *m.UnkID
		}
		t.unk = u.unk
		if u.byteFallback {
			u.bytes = make([]int, 256)
			for b := range u.bytes {
				u.bytes[b] = -1
			}
			for id, tok := range t.tokens {
				var b int
				if len(tok) == 6 && strings.HasPrefix(tok, "<0x") && tok[5] == '>' {
					if _, err := fmt.Sscanf(tok, "<0x%02X>", &b); err == nil && b >= 0 && b < 256 {
						u.bytes[b] = id
					}
				}
			}
		}
		t.model = u
		return nil
	}
	return unsupported("model", ty.Type)
}

type wordLevel struct {
	vocab map[string]int
	unk   int
}

func (m *wordLevel) tokenize(w string, out []int) []int {
	if id, ok := m.vocab[w]; ok {
		return append(out, id)
	}
	if m.unk >= 0 {
		return append(out, m.unk)
	}
	return out
}

// wordPiece is greedy longest-match-first: a word that cannot be covered
// by the vocabulary is one unknown token.
type wordPiece struct {
	vocab    map[string]int
	unk      int
	prefix   string
	maxChars int
}

func (m *wordPiece) tokenize(w string, out []int) []int {
	n := len(out)
	unk := func() []int {
		out = out[:n]
		if m.unk >= 0 {
			return append(out, m.unk)
		}
		return out
	}
	if utf8.RuneCountInString(w) > m.maxChars {
		return unk()
	}
	for start := 0; start < len(w); {
		end := len(w)
		found := -1
		for end > start {
			sub := w[start:end]
			if start > 0 {
				sub = m.prefix + sub
			}
			if id, ok := m.vocab[sub]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(w[start:end])
			end -= size
		}
		if found < 0 {
			return unk()
		}
		out = append(out, found)
		start = end
	}
	return out
}

// unigram segments a word into the pieces whose scores (log
// probabilities) sum highest (Viterbi), as tokenizers' Unigram does; a
// character no piece covers is the unknown token (scored as the lowest
// piece less 10), or its bytes' <0xNN> pieces with byte_fallback.
type unigram struct {
	trie         map[uint64]int32 // (node << 8 | byte) -> child node
	pieceID      map[int32]int    // node -> id of the piece ending there
	scores       []float64        // by id
	nodes        int32
	unk          int
	minScore     float64
	byteFallback bool
	bytes        []int
}

func (u *unigram) add(tok string, id int, score float64) {
	for len(u.scores) <= id {
		u.scores = append(u.scores, 0)
	}
	u.scores[id] = score
	if tok == "" {
		return
	}
	var node int32
	for i := 0; i < len(tok); i++ {
		k := uint64(node)<<8 | uint64(tok[i])
		next, ok := u.trie[k]
		if !ok {
			u.nodes++
			next = u.nodes
			u.trie[k] = next
		}
		node = next
	}
	if _, dup := u.pieceID[node]; !dup {
		u.pieceID[node] = id
	}
}

const unkPenalty = 10.0

func (u *unigram) tokenize(w string, out []int) []int {
	n := len(w)
	type best struct {
		score float64
		start int // where the piece ending here starts; -1: unreached
		id    int // its id; -1: unknown
	}
	lat := make([]best, n+1)
	for i := 1; i <= n; i++ {
		lat[i].start = -1
	}
	unkScore := u.minScore - unkPenalty
	for i := 0; i < n; i++ {
		if lat[i].start < 0 && i > 0 {
			continue
		}
		if !utf8.RuneStart(w[i]) {
			continue
		}
		_, size := utf8.DecodeRuneInString(w[i:])
		single := false
		var node int32
		for j := i; j < n; j++ {
			next, ok := u.trie[uint64(node)<<8|uint64(w[j])]
			if !ok {
				break
			}
			node = next
			if id, ok := u.pieceID[node]; ok && (j+1 == n || utf8.RuneStart(w[j+1])) {
				s := lat[i].score + u.scores[id]
				if j+1 == i+size {
					single = true
				}
				if e := &lat[j+1]; e.start < 0 || s > e.score {
					*e = best{score: s, start: i, id: id}
				}
			}
		}
		if !single {
			s := lat[i].score + unkScore
			if e := &lat[i+size]; e.start < 0 || s > e.score {
				*e = best{score: s, start: i, id: -1}
			}
		}
	}
	var rev []best
	var ends []int
	for i := n; i > 0; i = lat[i].start {
		rev = append(rev, lat[i])
		ends = append(ends, i)
	}
	var lastUnk bool
	for k := len(rev) - 1; k >= 0; k-- {
		b := rev[k]
		if b.id >= 0 {
			out = append(out, b.id)
			lastUnk = false
			continue
		}
		if u.byteFallback && u.bytes != nil {
			ok := true
			var ids []int
			for _, c := range []byte(w[b.start:ends[k]]) {
				if u.bytes[c] < 0 {
					ok = false
					break
				}
				ids = append(ids, u.bytes[c])
			}
			if ok {
				out = append(out, ids...)
				lastUnk = false
				continue
			}
		}
		// Consecutive unknown characters are one unknown token (fuse_unk).
		if u.unk >= 0 && !lastUnk {
			out = append(out, u.unk)
		}
		lastUnk = true
	}
	return out
}

// medianTokenLength is model2vec's estimate of characters per token:
// the median of the vocabulary's token lengths in characters, floored.
func (t *tokenizer) medianTokenLength() int {
	lens := make([]int, 0, len(t.tokens))
	for _, s := range t.tokens {
		lens = append(lens, utf8.RuneCountInString(s))
	}
	if len(lens) == 0 {
		return 1
	}
	slices.Sort(lens)
	m := len(lens) / 2
	if len(lens)%2 == 1 {
		return max(lens[m], 1)
	}
	return max((lens[m-1]+lens[m])/2, 1)
}
