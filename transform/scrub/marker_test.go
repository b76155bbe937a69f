package scrub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pos-lake/pos/transform/scrub/scrubtest"
)

// anyMarkerRE is a redaction marker, whatever its label.
var anyMarkerRE = regexp.MustCompile(`\[REDACTED:[A-Za-z0-9_.-]{1,64}:[0-9a-f]{8}\]`)

// followers are what may be glued to a token in text: a query string's
// next pair, a path, an assignment's rest, a word joined by a hyphen, a
// colon, a possessive. A follower is tried with a kind only when its first
// character is not one the kind's values are made of (a hyphen after a
// base64url token is part of the token).
var followers = []string{"", "/next", "=next", "&x=1", "?a=b", "#top", "-foo", ": x", ",x", ")", "|x", "'s", ";", "%20x", "~x"}

// formatBytes are the bytes a kind's published format admits inside a
// token beyond those the generator draws (a Grafana Cloud token is
// base64, padding included; a PlanetScale password takes _ = . -).
var formatBytes = map[string]string{
	"grafana-cloud-token":     "+/=",
	"1password-service-token": "+/=",
	"planetscale-password":    "_=.-",
	"terraform-cloud-token":   "-_=",
	"bitbucket-app-password":  "_=.-",
	"atlassian-api-token":     "_=-",
	"sendgrid-api-key":        "=_-.",
	"jwt":                     "=/\\",
}

// variant is one way a credential is written: a context, and what is
// glued after the credential.
type variant struct {
	name, text string
}

// secretVariants writes c (of kind k) in every context of the generated
// set and a few more (a URL's password, a command line, a bearer header, a
// token after a word or inside a URL's path and query), each with every
// follower that cannot be part of the credential.
func secretVariants(k scrubtest.Kind, c scrubtest.Cred, r *scrubtest.Rand) []variant {
	v := c.Value
	var ctx []variant
	for _, sn := range scrubtest.Contexts(k, c, r) {
		if sn.Context == "yaml-block" {
			continue // the key's lines indented: another text
		}
		ctx = append(ctx, variant{sn.Context, sn.Text})
	}
	oneLine := !strings.Contains(v, "\n") && !c.Command && !c.JSONDoc
	if !oneLine {
		return ctx
	}
	if !strings.ContainsAny(v, "@/?#&%:;,'\"\\ ") {
		ctx = append(ctx, variant{"url-password", "DATABASE_URL=postgres://app:" + v + "@db.internal:5432/app"})
	}
	if !strings.ContainsAny(v, "';") && !strings.Contains(v, "://") { // a URL, a connection string: another password
		ctx = append(ctx, variant{"mysql-p", "mysql -u root -p'" + v + "' shop"})
		ctx = append(ctx, variant{"sshpass", "sshpass -p '" + v + "' ssh deploy@web1 uptime"})
	}
	if k.Bare && !strings.Contains(v, "://") {
		ctx = append(ctx,
			variant{"after-key", "key " + v},
			variant{"after-id", "the id " + v + " is set"},
			variant{"url-query", "url=https://api.example.net/v1/items?token=" + v + "&page=2"},
			variant{"url-path", "GET https://api.example.net/v1/keys/" + v},
			variant{"bearer", "Authorization: Bearer " + v},
		)
	}
	// The characters the kind's values are made of: those the generator
	// draws, and those the published format admits beyond them.
	alphabet := map[byte]bool{}
	for _, b := range []byte(formatBytes[k.Name]) {
		alphabet[b] = true
	}
	for range 64 {
		for _, b := range []byte(scrubtest.Generate(k, r).Value) {
			alphabet[b] = true
		}
	}
	var out []variant
	for _, x := range ctx {
		for _, f := range followers {
			if f != "" && (!k.Bare || alphabet[f[0]]) {
				continue
			}
			i := strings.Index(x.text, v)
			if i < 0 {
				continue
			}
			text := x.text[:i+len(v)] + f + x.text[i+len(v):]
			out = append(out, variant{x.name + "+" + f, text})
		}
	}
	return out
}

// TestOneMarkerPerSecret: a secret gets one marker wherever it is and
// whatever is glued to it. Every credential kind of the generated set
// (scrubtest.Kinds) is written in every context it is written in, and a
// token with every follower that cannot be part of it, in a message's
// text and in JSON held in a raw record's string; the markers of every
// variant of one credential must be the same set, and none of its random
// part may survive.
func TestOneMarkerPerSecret(t *testing.T) {
	r := scrubtest.NewRand(plantSeed + 30)
	type cred struct {
		kind     string
		random   []string
		variants []variant
	}
	var creds []cred
	var in bytes.Buffer
	for _, k := range scrubtest.Kinds {
		c := scrubtest.Generate(k, r)
		vs := secretVariants(k, c, r)
		creds = append(creds, cred{k.Name, c.Random, vs})
		for i, v := range vs {
			text, _ := json.Marshal(v.text)
			fmt.Fprintf(&in, `{"schema":"pos/1","kind":"message","platform":"codex","id":"%s-%d","role":"user","text":%s}`+"\n", k.Name, i, text)
			held, _ := json.Marshal(map[string]string{"content": v.text})
			raw, _ := json.Marshal(string(held))
			fmt.Fprintf(&in, `{"schema":"pos/1","kind":"raw","platform":"codex","id":"%s-%d-raw","raw":{"payload":%s}}`+"\n", k.Name, i, raw)
		}
	}
	var out bytes.Buffer
	if _, err := Scrub(context.Background(), &in, &out, Options{Key: testKey}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	nVariants, nKinds := 0, 0
	for _, c := range creds {
		// Each variant's markers, as a sorted list.
		type seen struct {
			name, text string
			markers    string
		}
		var all []seen
		for _, v := range c.variants {
			for _, place := range []string{"text", "raw"} {
				line := lines[0]
				lines = lines[1:]
				ms := anyMarkerRE.FindAllString(string(line), -1)
				slices.Sort(ms)
				ms = slices.Compact(ms)
				all = append(all, seen{v.name + " in " + place, v.text, strings.Join(ms, " ")})
				for _, part := range c.random {
					for _, run := range scrubtest.Runs(part) {
						if bytes.Contains(line, []byte(run)) {
							t.Errorf("%s, %s in %s: %q survives: %s", c.kind, v.name, place, run, line)
							break
						}
					}
				}
				if len(ms) == 0 {
					t.Errorf("%s, %s in %s: nothing redacted: %s", c.kind, v.name, place, line)
				}
			}
		}
		nVariants += len(all)
		nKinds++
		byMarkers := map[string][]string{}
		example := map[string]string{}
		for _, s := range all {
			byMarkers[s.markers] = append(byMarkers[s.markers], s.name)
			if _, ok := example[s.markers]; !ok {
				example[s.markers] = s.text
			}
		}
		if len(byMarkers) > 1 {
			var b strings.Builder
			for _, m := range slices.Sorted(mapsKeys(byMarkers)) {
				names := byMarkers[m]
				fmt.Fprintf(&b, "\n  %s: %d variants (%s", m, len(names), strings.Join(names[:min(4, len(names))], ", "))
				if len(names) > 4 {
					b.WriteString(", …")
				}
				fmt.Fprintf(&b, "), e.g. %q", example[m])
			}
			t.Errorf("%s: one secret, %d sets of markers:%s", c.kind, len(byMarkers), b.String())
		}
	}
	if nKinds < 120 || nVariants < 2000 {
		t.Errorf("%d kinds, %d variants: the set is too small", nKinds, nVariants)
	}
	t.Logf("%d kinds, %d variants", nKinds, nVariants)
}
