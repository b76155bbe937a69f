// Package scrubtest builds the labelled secret test set of pos-scrub: fake but
// format-valid credentials of many types, generated from a seed at test
// time (nothing secret-shaped is committed), planted in realistic records
// of every platform — in text, tool inputs and outputs, file paths,
// titles, documents, exchanges, unknown fields, meta, and the native
// records of the raw layer, JSON-escaped once or twice.
//
// The records come from testdata/secrets/templates.ndjson, one template
// per platform and place; each template is filled with every credential
// type that fits it.
package scrubtest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

// An Instance is one credential planted in one record.
type Instance struct {
	Type     string
	Platform string
	Slot     string
	// Secrets are the strings that must not survive scrubbing: the
	// credential, or its secret parts (a URL's password, a key's lines).
	Secrets []string
	// Snippet is the text the credential was planted as.
	Snippet string
	// Line is the record, one NDJSON line without the newline.
	Line []byte
}

type template struct {
	Platform string          `json:"platform"`
	Slot     string          `json:"slot"`
	Record   json.RawMessage `json:"record"`
}

// Plant reads the templates at path (testdata/secrets/templates.ndjson)
// and generates the set from seed: every credential type in every template
// it fits, each instance with its own credential. The same seed gives the
// same set.
func Plant(path string, seed uint64) ([]Instance, error) {
	tpls, err := readTemplates(path)
	if err != nil {
		return nil, err
	}
	r := &rng{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	var out []Instance
	n := 0
	for _, ct := range types {
		for _, t := range tpls {
			rec := string(t.Record)
			var snippet string
			var secrets []string
			switch {
			case strings.Contains(rec, "{{B}}"):
				if !ct.bare {
					continue
				}
				ok := false
				for try := 0; try < 64 && !ok; try++ {
					snippet, secrets = ct.gen(r)
					ok = len(secrets) == 1 && snippet == secrets[0]
				}
				if !ok {
					continue // no bare form (a URL's password)
				}
			default:
				snippet, secrets = ct.gen(r)
				if strings.Contains(rec, "{{L}}") && strings.Contains(snippet, "\n") {
					continue // a title is one line
				}
			}
			n++
			once := escape(snippet)
			line := strings.NewReplacer(
				"{{S}}", once, "{{S2}}", escape(once), "{{L}}", once, "{{B}}", once,
				"{{ID}}", fmt.Sprintf("plant-%05d", n),
			).Replace(rec)
			if !json.Valid([]byte(line)) {
				return nil, fmt.Errorf("%s %s/%s: filled template is not JSON", ct.name, t.Platform, t.Slot)
			}
			out = append(out, Instance{Type: ct.name, Platform: t.Platform, Slot: t.Slot, Secrets: secrets, Snippet: snippet, Line: []byte(line)})
		}
	}
	return out, nil
}

// escape returns s as it reads inside a JSON string.
func escape(s string) string {
	b, _ := json.Marshal(s)
	// json.Marshal escapes <, > and & for HTML; the pos encoder does not.
	b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
	b = bytes.ReplaceAll(b, []byte(`\u003e`), []byte(">"))
	b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
	return string(b[1 : len(b)-1])
}

// Forms returns the forms of a secret that must not appear in scrubbed
// output: as it is, JSON-escaped once and twice, and in base64.
func Forms(secret string) []string {
	forms := []string{secret}
	add := func(f string) {
		for _, g := range forms {
			if g == f {
				return
			}
		}
		forms = append(forms, f)
	}
	add(escape(secret))
	add(escape(escape(secret)))
	add(base64.StdEncoding.EncodeToString([]byte(secret)))
	add(base64.RawURLEncoding.EncodeToString([]byte(secret)))
	return forms
}

// Survivors returns the secrets of inst that still appear, in any of their
// forms, in text.
func (inst *Instance) Survivors(text []byte) []string {
	var left []string
	for _, s := range inst.Secrets {
		for _, f := range Forms(s) {
			if bytes.Contains(text, []byte(f)) {
				left = append(left, s)
				break
			}
		}
	}
	return left
}

// PlantSnippets fills the templates at path with the snippets: each
// snippet goes into per templates, in turn, so that every place and
// platform gets every context. An instance's secrets are its credential's
// random parts.
func PlantSnippets(path string, snippets []Snippet, per int) ([]Instance, error) {
	tpls, err := readTemplates(path)
	if err != nil {
		return nil, err
	}
	var out []Instance
	k := 0
	for n, s := range snippets {
		for j := 0; j < per; j++ {
			var t template
			for {
				t = tpls[k%len(tpls)]
				k++
				rec := string(t.Record)
				if strings.Contains(rec, "{{B}}") || strings.Contains(rec, "{{L}}") && strings.Contains(s.Text, "\n") {
					continue // bare values and one-line places
				}
				break
			}
			once := escape(s.Text)
			line := strings.NewReplacer(
				"{{S}}", once, "{{S2}}", escape(once), "{{L}}", once,
				"{{ID}}", fmt.Sprintf("snip-%05d-%d", n, j),
			).Replace(string(t.Record))
			if !json.Valid([]byte(line)) {
				return nil, fmt.Errorf("%s %s/%s: filled template is not JSON", s.Kind, t.Platform, t.Slot)
			}
			out = append(out, Instance{Type: s.Kind + "/" + s.Context, Platform: t.Platform, Slot: t.Slot, Secrets: s.Cred.Random, Snippet: s.Text, Line: []byte(line)})
		}
	}
	return out, nil
}

// RunLen is the length of the runs of a random part that must not survive.
const RunLen = 20

// Runs returns the runs of RunLen characters of a random part (the part
// itself when shorter).
func Runs(part string) []string {
	if len(part) <= RunLen {
		return []string{part}
	}
	out := make([]string, 0, len(part)-RunLen+1)
	for i := 0; i+RunLen <= len(part); i++ {
		out = append(out, part[i:i+RunLen])
	}
	return out
}

// RunSurvivors returns the random parts of inst of which a run survives in
// text, as is or JSON-escaped.
func (inst *Instance) RunSurvivors(text []byte) []string {
	var left []string
	for _, s := range inst.Secrets {
		for _, run := range Runs(s) {
			if bytes.Contains(text, []byte(run)) || bytes.Contains(text, []byte(escape(run))) {
				left = append(left, s)
				break
			}
		}
	}
	return left
}

func readTemplates(path string) ([]template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tpls []template
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var t template
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		tpls = append(tpls, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return tpls, nil
}
