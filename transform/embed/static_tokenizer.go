package embed

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
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

// componentType returns the type of a tokenizer.json component (a
// normalizer, a pre-tokenizer), and false when the component is missing or
// null.
func componentType(raw json.RawMessage) (string, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, nil
	}
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return "", false, err
	}
	return ty.Type, true, nil
}

// parseSequence parses the members of a Sequence component in order, each
// with parse, and joins the steps they give.
func parseSequence[F any](members []json.RawMessage, parse func(json.RawMessage) ([]F, error)) ([]F, error) {
	var out []F
	for _, m := range members {
		fs, err := parse(m)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
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
