package scrub

import (
	"bytes"
	"strings"

	"github.com/pos-lake/pos/internal/keyword"
)

// cliUserPassword finds user:password given to -u/--user (curl, httpie)
// or --password/--http-password= (wget) on the command's line or its
// continuation lines: the password, whatever characters it holds.
func cliUserPassword(text []byte, pos, kwLen int, out []span) []span {
	if pos > 0 && isWord(text[pos-1]) || pos+kwLen < len(text) && isWord(text[pos+kwLen]) && text[pos+kwLen-1] != ' ' {
		return out
	}
	end := min(len(text), pos+2048)
	for i := pos + kwLen; i < end; i++ {
		if text[i] == '\n' && (i == 0 || text[i-1] != '\\') {
			break
		}
		if !isSpace(text[i]) || i+1 >= end {
			continue
		}
		o := text[i+1:]
		var n int
		switch {
		case bytes.HasPrefix(o, []byte("-u")) && len(o) > 2 && (o[2] == ' ' || o[2] == '='):
			n = 2
		case bytes.HasPrefix(o, []byte("--user")) && len(o) > 6 && (o[6] == ' ' || o[6] == '='):
			n = 6
		case bytes.HasPrefix(o, []byte("-a")) && len(o) > 2 && o[2] == ' ':
			n = 2
		default:
			continue
		}
		v := i + 1 + n
		for v < end && (text[v] == ' ' || text[v] == '=') {
			v++
		}
		if v >= end {
			break
		}
		vs, ve := v, v
		if q := text[v]; q == '"' || q == '\'' {
			vs = v + 1
			e := indexByte(text[vs:end], q)
			if e < 0 {
				continue
			}
			ve = vs + e
		} else {
			for ve < end && !isSpace(text[ve]) && text[ve] != '"' && text[ve] != '\'' {
				ve++
			}
		}
		if !(vs < ve && (text[vs-1] == '"' || text[vs-1] == '\'')) {
			for ve > vs && strings.IndexByte(",.;)", text[ve-1]) >= 0 {
				ve-- // prose: "curl -u user:password, then …"
			}
		}
		c := indexByte(text[vs:ve], ':')
		if c < 0 || placeholder(text[vs+c+1:ve]) {
			continue
		}
		out = append(out, span{start: vs + c + 1, end: ve})
	}
	return out
}

// cliTools are the commands that take a password as an argument, and how:
// attached (-pSECRET), as the next word (-a SECRET), after = (--password=),
// after a separator inside a word (-U user%SECRET), or positionally
// (htpasswd -b file user SECRET).
var cliTools = map[string]cliTool{
	"mysql":        {attached: []string{"-p"}, eq: []string{"--password"}},
	"mariadb":      {attached: []string{"-p"}, eq: []string{"--password"}},
	"sshpass":      {attached: []string{"-p"}, next: []string{"-p"}},
	"redis-cli":    {next: []string{"-a", "--pass", "--password"}},
	"login":        {next: []string{"-p", "--password"}, eq: []string{"--password"}}, // docker login, podman login, helm registry login
	"mongo":        {next: []string{"-p", "--password"}, eq: []string{"--password"}},
	"mongosh":      {next: []string{"-p", "--password"}, eq: []string{"--password"}},
	"mongodump":    {next: []string{"-p", "--password"}, eq: []string{"--password"}},
	"mongorestore": {next: []string{"-p", "--password"}, eq: []string{"--password"}},
	"smbclient":    {sep: map[string]byte{"-U": '%', "--user": '%'}},
	"sqlcmd":       {next: []string{"-P"}},
	"bcp":          {next: []string{"-P"}},
	"ldapsearch":   {next: []string{"-w"}},
	"ldapadd":      {next: []string{"-w"}},
	"ldapmodify":   {next: []string{"-w"}},
	"ldapdelete":   {next: []string{"-w"}},
	"htpasswd":     {batch: true},
}

type cliTool struct {
	attached, next, eq []string
	sep                map[string]byte
	batch              bool // htpasswd: with -b, the password is the last positional argument
}

// cliKeywords trigger cliPassword: the tools' names (mysql covers mysqldump,
// mysqladmin …).
var cliKeywords = []string{"mysql", "mariadb", "sshpass", "redis-cli", "login", "mongo", "smbclient", "sqlcmd", "bcp", "ldap", "htpasswd"}

// cliGuard lets cliPassword look only at a tool's name that a space
// follows, and at login only after a registry client's name (docker
// login, podman login, helm registry login …): login is a common word.
func cliGuard(text []byte, pos int) bool {
	e := pos
	for e < len(text) && e-pos < 24 && (isAlnum(text[e]) || text[e] == '-' || text[e] == '_') {
		e++
	}
	if e >= len(text) || text[e] != ' ' && text[e] != '\t' {
		return false
	}
	if !keyword.HasPrefixFold(text[pos:], "login") {
		return true
	}
	if pos < 2 || text[pos-1] != ' ' {
		return false
	}
	s := pos - 1
	for s > 0 && text[s-1] == ' ' {
		s--
	}
	ws := s
	for ws > 0 && (isAlnum(text[ws-1]) || text[ws-1] == '-') {
		ws--
	}
	return s > ws && loginClients[string(text[ws:s])]
}

// loginClients are the commands whose login subcommand takes -p PASSWORD.
var loginClients = map[string]bool{"docker": true, "podman": true, "registry": true, "nerdctl": true, "buildah": true,
	"skopeo": true, "oras": true, "crane": true, "cf": true, "finch": true}

// cliPassword finds a password given on the command line of a tool that
// takes one (mysql -pSECRET, sshpass -p SECRET, htpasswd -b f user SECRET,
// redis-cli -a SECRET, docker login -p SECRET …): the word, quoted or not,
// up to the end of the command.
func cliPassword(text []byte, pos, kwLen int, out []span) []span {
	if pos > 0 {
		if c := text[pos-1]; isIdent(c) || c == '.' {
			return out
		}
	}
	e := pos
	for e < len(text) && e-pos < 24 && (isAlnum(text[e]) || text[e] == '-' || text[e] == '_') {
		e++
	}
	name := strings.ToLower(string(text[pos:e]))
	tool, ok := cliTools[name]
	if !ok {
		switch {
		case strings.HasPrefix(name, "mysql"), strings.HasPrefix(name, "mariadb"):
			tool = cliTools["mysql"]
		case strings.HasPrefix(name, "ldap"):
			return out
		default:
			return out
		}
	}
	words := shellWords(text, e, min(len(text), e+2048))
	var positional []word
	var batch, noFile, skip bool
	for i, w := range words {
		raw := text[w.start:w.end]
		var vs, ve int = -1, -1
		for _, o := range tool.attached {
			if len(raw) > len(o) && bytes.HasPrefix(raw, []byte(o)) && raw[len(o)] != '-' {
				vs, ve = unquoteWord(text, w.start+len(o), w.end)
			}
		}
		for _, o := range tool.eq {
			if bytes.HasPrefix(raw, []byte(o+"=")) {
				vs, ve = unquoteWord(text, w.start+len(o)+1, w.end)
			}
		}
		for _, o := range tool.next {
			if string(raw) == o && i+1 < len(words) {
				vs, ve = unquoteWord(text, words[i+1].start, words[i+1].end)
			}
		}
		for o, sep := range tool.sep {
			v := w
			switch {
			case string(raw) == o && i+1 < len(words):
				v = words[i+1]
			case bytes.HasPrefix(raw, []byte(o+"=")):
				v.start += len(o) + 1
			default:
				continue
			}
			a, b := unquoteWord(text, v.start, v.end)
			if k := indexByte(text[a:b], sep); k >= 0 {
				vs, ve = a+k+1, b
			}
		}
		if tool.batch {
			switch {
			case skip:
				skip = false
			case len(raw) > 1 && raw[0] == '-':
				batch = batch || bytes.IndexByte(raw[1:], 'b') >= 0
				noFile = noFile || bytes.IndexByte(raw[1:], 'n') >= 0
				skip = string(raw) == "-C" || string(raw) == "-r" // options with a value
			default:
				positional = append(positional, w)
			}
		}
		if vs >= 0 && ve > vs && !placeholder(text[vs:ve]) && text[vs] != '$' && text[vs] != '`' && ve-vs >= 4 {
			out = append(out, span{start: vs, end: ve})
		}
	}
	// htpasswd -b[c…] file user password; htpasswd -nb user password.
	if at := 2; batch && (noFile && len(positional) > 1 || len(positional) > 2) {
		if noFile {
			at = 1
		}
		w := positional[at]
		if vs, ve := unquoteWord(text, w.start, w.end); ve-vs >= 4 && !placeholder(text[vs:ve]) && text[vs] != '$' {
			out = append(out, span{start: vs, end: ve})
		}
	}
	return out
}

// word is a shell word of the scan text: [start, end), quotes included.
type word struct{ start, end int }

// shellWords splits a command line from i to lim into words, quotes
// respected, up to the end of the command: a newline that no backslash
// continues, ; | & or a backquote outside quotes.
func shellWords(text []byte, i, lim int) []word {
	var out []word
	for i < lim {
		c := text[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '\\' && i+1 < lim && text[i+1] == '\n':
			i += 2
			continue
		case c == '\n' || c == '\r' || c == ';' || c == '|' || c == '&' || c == '`' || c == ')' || c == '<' || c == '>':
			return out
		}
		s := i
		for i < lim {
			c := text[i]
			if c == '"' && i+1 < lim && strings.IndexByte(",:]}", text[i+1]) >= 0 {
				// The end of the JSON string the command was written
				// in, in a scan text: "}, ", …
				if i > s {
					out = append(out, word{s, i})
				}
				return out
			}
			if c == '\'' || c == '"' {
				k := indexByte(text[i+1:lim], c)
				if k < 0 || indexByte(text[i+1:i+1+k], '\n') >= 0 {
					// An unclosed quote: the end of the string the
					// command was written in.
					if i > s {
						out = append(out, word{s, i})
					}
					return out
				}
				i += k + 2
				continue
			}
			if isSpace(c) || c == ';' || c == '|' || c == '&' || c == '`' || c == '<' || c == '>' {
				break
			}
			i++
		}
		out = append(out, word{s, i})
	}
	return out
}

// unquoteWord returns the content of a shell word [s, e): without the
// quotes around it (\"…\" in JSON held in a string).
func unquoteWord(text []byte, s, e int) (int, int) {
	if e-s >= 4 && text[s] == '\\' && text[s+1] == '"' && text[e-2] == '\\' && text[e-1] == '"' {
		return s + 2, e - 2
	}
	if e-s >= 2 && (text[s] == '\'' || text[s] == '"') && text[e-1] == text[s] {
		return s + 1, e - 1
	}
	return s, e
}
