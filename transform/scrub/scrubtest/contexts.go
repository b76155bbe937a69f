package scrubtest

import (
	"encoding/json"
	"strings"
	"unicode"
)

// A Snippet is a credential written down in one context: a line of a .env
// file, a JSON or YAML config, a header, a settings file, a sentence.
type Snippet struct {
	Kind    string
	Context string
	Text    string
	Cred    Cred
}

// snake and camel spell a variable name (GITHUB_TOKEN) as settings files
// do: github_token, githubToken.
func snake(v string) string { return strings.ToLower(v) }

func camel(v string) string {
	var b strings.Builder
	for i, part := range strings.Split(strings.ToLower(v), "_") {
		if i > 0 && part != "" {
			r := []rune(part)
			r[0] = unicode.ToUpper(r[0])
			part = string(r)
		}
		b.WriteString(part)
	}
	return b.String()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	b = []byte(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b)))
	return string(b)
}

// Contexts writes c (of kind k) in every context it fits: the assignment
// syntaxes of shell, .env, JSON, YAML, TOML, Python, JavaScript and Go,
// an Authorization header, a URL, a sentence (with the punctuation that
// follows a word in prose), a command line.
func Contexts(k Kind, c Cred, r *rng) []Snippet {
	var out []Snippet
	add := func(ctx, text string) { out = append(out, Snippet{Kind: k.Name, Context: ctx, Text: text, Cred: c}) }
	v, name := c.Value, k.Var
	switch {
	case c.Command:
		add("command", v)
		add("command-in-prose", "I ran `"+v+"` and it worked.")
		return out
	case c.JSONDoc:
		add("json-file", v)
		add("env-json", name+"='"+strings.ReplaceAll(v, "\n", "")+"'")
		return out
	case c.Multiline():
		add("pem-file", v)
		add("json-escaped", "{\n  \""+camel(name)+"\": "+jsonString(v+"\n")+"\n}")
		add("env-escaped-newlines", name+"=\""+strings.ReplaceAll(v, "\n", `\n`)+"\"")
		add("yaml-block", "tls:\n  "+snake(name)+": |\n    "+strings.ReplaceAll(v, "\n", "\n    "))
		return out
	}
	if name != "" {
		add("env", name+"="+v)
		add("export", "export "+name+"="+v)
		add("env-quoted", name+"=\""+v+"\"")
		add("json", "{\n  \"service\": {\n    \""+camel(name)+"\": "+jsonString(v)+",\n    \"timeout\": 30\n  }\n}")
		add("json-snake", `{"`+snake(name)+`": `+jsonString(v)+`, "region": "eu-west-1"}`)
		add("yaml", "service:\n  "+snake(name)+": "+v+"\n  region: eu-west-1")
		add("yaml-quoted", "- name: deploy\n  env:\n    "+name+": \""+v+"\"")
		add("toml", "[service]\n"+snake(name)+" = \""+v+"\"\nregion = \"eu-west-1\"")
		add("python", name+" = '"+v+"'")
		add("python-dict", "SETTINGS = {\n    \""+snake(name)+"\": \""+v+"\",\n}")
		add("js", "const "+camel(name)+" = \""+v+"\";")
		add("go", camel(name)+" := \""+v+"\"")
	}
	if k.Bearer {
		add("auth-header", "Authorization: Bearer "+v)
		add("curl-header", `curl -s -H "Authorization: Bearer `+v+`" https://api.example.net/v1/me`)
	}
	if strings.Contains(v, "://") {
		add("url-in-prose", "The endpoint is "+v+" (keep it private).")
		add("url-curl", "curl -X POST -H 'Content-Type: application/json' -d '{\"text\":\"deploy done\"}' "+v)
	}
	if k.Bare && !strings.Contains(v, "://") {
		for _, p := range []string{".", ",", ")", "'", `"`, ";", ":"} {
			switch p {
			case ")":
				add("prose"+p, "Use the new key ("+v+") from now on.")
			case "'", `"`:
				add("prose"+p, "the value is "+p+v+p+" as given")
			default:
				add("prose"+p, "Here is the token "+v+p+" Rotate it later")
			}
		}
	}
	return out
}
