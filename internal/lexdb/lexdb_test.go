package lexdb

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
)

// writeDict writes a dictionary in dictd's format: the definitions one
// after the other, an index sorted by lowercased headword with dictd's
// base64 numbers, and the data as a dictzip file of chunkLen-byte chunks
// (or plain, chunkLen 0).
func writeDict(t testing.TB, base string, entries [][2]string, chunkLen int) {
	t.Helper()
	var data bytes.Buffer
	var lines []string
	for _, e := range entries {
		off := data.Len()
		data.WriteString(e[1])
		lines = append(lines, e[0]+"\t"+enc64(off)+"\t"+enc64(len(e[1])))
	}
	sort.SliceStable(lines, func(i, j int) bool {
		a, _, _ := strings.Cut(lines[i], "\t")
		b, _, _ := strings.Cut(lines[j], "\t")
		return strings.ToLower(a) < strings.ToLower(b)
	})
	if err := os.WriteFile(base+".index", []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if chunkLen == 0 {
		if err := os.WriteFile(base+".dict", data.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	// Each chunk is deflated on its own and ended by a flush.
	var body bytes.Buffer
	var sizes []int
	raw := data.Bytes()
	for i := 0; i < len(raw); i += chunkLen {
		var c bytes.Buffer
		w, _ := flate.NewWriter(&c, 9)
		w.Write(raw[i:min(i+chunkLen, len(raw))])
		w.Flush()
		sizes = append(sizes, c.Len())
		body.Write(c.Bytes())
	}
	var ra bytes.Buffer
	ra.WriteString("RA")
	binary.Write(&ra, binary.LittleEndian, uint16(6+2*len(sizes)))
	binary.Write(&ra, binary.LittleEndian, uint16(1))
	binary.Write(&ra, binary.LittleEndian, uint16(chunkLen))
	binary.Write(&ra, binary.LittleEndian, uint16(len(sizes)))
	for _, s := range sizes {
		binary.Write(&ra, binary.LittleEndian, uint16(s))
	}
	var f bytes.Buffer
	f.Write([]byte{0x1f, 0x8b, 8, 4 | 8, 0, 0, 0, 0, 2, 3})
	binary.Write(&f, binary.LittleEndian, uint16(ra.Len()))
	f.Write(ra.Bytes())
	f.WriteString("test.dict\x00")
	f.Write(body.Bytes())
	if err := os.WriteFile(base+".dict.dz", f.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func enc64(n int) string {
	if n == 0 {
		return "A"
	}
	var b []byte
	for ; n > 0; n /= 64 {
		b = append([]byte{b64Digits[n%64]}, b...)
	}
	return string(b)
}

// germanEntries are FreeDict-style definitions (the headword line, the
// translations, examples and references that are not glosses).
var germanEntries = [][2]string{
	{"Datei", "Datei /datˈaɪ/ <fem, n, sg>\n [comp.] computer file <n>, file <n>\n      \"eine Datei öffnen\"  - open a file\n   Synonym: {Computerdatei}\n\n"},
	{"Kennwort", "Kennwort /kˈɛnvɔɾt/ <neut, n, sg>\npassword <n>\n   Synonym: {Erkennungswort}\n\n"},
	{"Symbol", "Symbol /zymbˈoːl/ <neut, n, sg>\nemblem <n>, badge <n>, insignia <n>\n\n"},
	{"leer", "leer /lˈeːɾ/ <adj>\nblank <adj>, empty\n\n"},
	{"Sitzung", "Sitzung <fem, n, sg>\nsession <n>, meeting <n>\n\n"},
	{"Beginn", "Beginn <masc, n, sg>\nbeginning <n>, start <n>\n\n"},
	{"Achse", "Achse <fem, n, sg>\n1. axis\n2. axle\n\n"},
	{"Zebra", "Zebra <neut, n>\nzebra\n\n"},
}

func TestDictLookup(t *testing.T) {
	for _, chunk := range []int{0, 16, 4096} {
		dir := t.TempDir()
		writeDict(t, filepath.Join(dir, "freedict-deu-eng"), germanEntries, chunk)
		tr := New(dir)
		for _, c := range []struct {
			word string
			want []string
		}{
			{"Datei", []string{"computer file", "file"}},
			{"kennwort", []string{"password"}},
			{"Kennwörter", []string{"password"}},                                              // by the stem
			{"Symboldatei", []string{"computer file", "emblem", "file", "badge", "insignia"}}, // a compound
			{"Sitzungsbeginn", []string{"beginning", "session", "start", "meeting"}},          // with a linking s
			{"Achsen", []string{"axis", "axle"}},
			{"Zebra", []string{"zebra"}},
			{"Haus", nil},
			{"aaa", nil},
			{"zzzz", nil},
		} {
			if got := tr.Word("de", c.word); !slices.Equal(got, c.want) {
				t.Errorf("chunks of %d: %s: %q, want %q", chunk, c.word, got, c.want)
			}
		}
		if !tr.Has("de") || tr.Has("fr") || tr.Word("fr", "fichier") != nil {
			t.Errorf("chunks of %d: only German is installed", chunk)
		}
		tr.Close()
	}
}

func TestJapaneseAndRussian(t *testing.T) {
	dir := t.TempDir()
	writeDict(t, filepath.Join(dir, "freedict-jpn-eng"), [][2]string{
		{"センサー", " [gai1]  センサー /se̞ˈũsää/\n(noun (common) (futsuumeishi))\nsensor\n"},
		{"セン", "セン\n(noun)\ncent\n"},
		{"学習", "学習 /x/, がくしゅう /y/\n(noun (common) (futsuumeishi))\nstudy, learning\n"},
		{"の", "の\n(particle)\nof\n"},
		{"説明書", "説明書 /z/\n(noun)\n(printed) instructions\n"},
	}, 64)
	writeDict(t, filepath.Join(dir, "mueller7"), [][2]string{
		{"password", "password\n   [↗pɑ:swɜ:d] _n. пароль; пропуск\n"},
		{"forbid", "forbid\n   [fɜ↗bɪd] _v. запрещать; не позволять; to\nforbid smb. the country запретить кому-л. въезд в страну\n"},
		{"watchword", "watchword\n   _n. 1) пароль, лозунг\n"},
	}, 32)
	tr := New(dir)
	defer tr.Close()
	got := tr.Japanese("センサー学習の説明書")
	want := [][]string{{"sensor"}, {"study", "learning"}, {"instructions"}} // the particle is not looked up
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Japanese: %q, want %q", got, want)
	}
	if got := tr.Word("ru", "пароли"); !slices.Equal(got, []string{"password", "watchword"}) {
		t.Errorf("пароли: %q", got)
	}
	if got := tr.Word("ru", "запрещает"); !slices.Equal(got, []string{"forbid"}) {
		t.Errorf("запрещает: %q", got) // not "country", an example's
	}
	if got := tr.Word("ru", "страну"); got != nil {
		t.Errorf("страну is only in an example: %q", got)
	}
}

func TestGlosses(t *testing.T) {
	for _, c := range []struct {
		def  string
		want []string
	}{
		{"arrancar /ˌarankˈaɾ/\n1. pick, pluck, tearoff\n2. put on, start\n", []string{"pick", "pluck", "tearoff", "put on", "start"}},
		{"Diagramm /d/ <neut>\ndiagram <n>, chart <n>, plot <n> [Am.]\n      \"wie das Diagramm zeigt\"  - as the chart shows\n see: {Diagramme}\n", []string{"diagram", "chart", "plot"}},
		{" [gai1] マウス /m/\n1. (noun (common) (futsuumeishi))\n{二十日鼠・はつかねずみ}mouse (esp. laboratory)\n2.  [computer terminology] mouse\n", []string{"mouse"}},
		{"x\nжурнал\n", nil},
	} {
		if got := Glosses(c.def); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.def, got, c.want)
		}
	}
}

// TestInstalled checks Debian's dictionaries where they are installed
// (dict-freedict-deu-eng, dict-freedict-jpn-eng, mueller7-dict).
func TestInstalled(t *testing.T) {
	tr := New(Dir)
	defer tr.Close()
	for _, c := range []struct{ lang, word, want string }{
		{"de", "Kennwörter", "passwords"}, {"ru", "пароль", "password"}, {"fr", "utilisateur", "user"},
	} {
		if !tr.Has(c.lang) {
			t.Logf("no %s dictionary in %s (Debian: dict-freedict-*, mueller7-dict): skipped", c.lang, Dir)
			continue
		}
		if got := tr.Word(c.lang, c.word); !slices.Contains(got, c.want) {
			t.Errorf("%s %s: %q", c.lang, c.word, got)
		}
	}
	if !tr.Has("ja") {
		t.Skip("no Japanese dictionary in", Dir)
	}
	if got := tr.Japanese("マウスホイール"); len(got) != 2 || !slices.Contains(got[0], "mouse") || !slices.Contains(got[1], "wheel") {
		t.Errorf("マウスホイール: %q", got)
	}
}

func FuzzDictzip(f *testing.F) {
	f.Add([]byte("Datei <n>\nfile\n"), uint16(7), "datei")
	f.Fuzz(func(t *testing.T, def []byte, chunk uint16, word string) {
		dir := t.TempDir()
		base := filepath.Join(dir, "freedict-deu-eng")
		writeDict(t, base, [][2]string{{"Datei", string(def)}, {"Zebra", "z\nzebra\n"}}, int(chunk%512))
		d, err := Open(base)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if got := d.Lookup("datei"); len(def) > 0 && (len(got) != 1 || got[0] != string(def)) {
			t.Fatalf("%q: %q", def, got)
		}
		d.Lookup(word) // any word: no panic
		if !d.HasPrefix("dat") || !d.HasPrefix("Zeb") || d.HasPrefix("Zz") {
			t.Fatal("HasPrefix: Datei and Zebra are headwords, nothing starts with zz")
		}
		d.HasPrefix(word)
		// A corrupt data file: no panic, no definition.
		os.WriteFile(base+".dict.dz", append([]byte{0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0, 10, 0, 'R', 'A', 6, 0}, def...), 0o644)
		if d2, err := Open(base); err == nil {
			d2.Lookup(word)
			d2.Close()
		}
	})
}

// TestReversedCache: a dictionary from English is reversed once into the
// cache directory, and later translators look words up in the cached
// table without reading the dictionary; a dictionary whose files change
// (size or time) is reversed again, and the old table removed.
func TestReversedCache(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "pos", "lexdb")
	base := filepath.Join(dir, "mueller7")
	writeDict(t, base, [][2]string{
		{"password", "password\n   _n. пароль; пропуск\n"},
		{"watchword", "watchword\n   _n. 1) пароль, лозунг\n"},
	}, 0)
	tr := NewCached(dir, cache)
	if got := tr.Word("ru", "пароли"); !slices.Equal(got, []string{"password", "watchword"}) {
		t.Fatalf("пароли: %q", got)
	}
	tr.Close()
	tables, _ := filepath.Glob(filepath.Join(cache, "ru-eng-*.index"))
	if len(tables) != 1 {
		t.Fatalf("cached tables: %q", tables)
	}
	// The dictionary's text replaced by one of the same size and time: a
	// new translator answers from the cached table.
	st, err := os.Stat(base + ".dict")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".dict", bytes.Repeat([]byte("x"), int(st.Size())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(base+".dict", st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	tr = NewCached(dir, cache)
	if got := tr.Word("ru", "пароль"); !slices.Equal(got, []string{"password", "watchword"}) {
		t.Errorf("from the cache: %q", got)
	}
	tr.Close()
	if got := New(dir).Word("ru", "пароль"); got != nil {
		t.Errorf("without a cache the dictionary is read: %q", got)
	}
	// A newer dictionary: reversed again.
	later := st.ModTime().Add(time.Minute)
	os.Chtimes(base+".dict", later, later)
	tr = NewCached(dir, cache)
	defer tr.Close()
	if got := tr.Word("ru", "пароль"); got != nil {
		t.Errorf("a changed dictionary is not reversed again: %q", got)
	}
	if now, _ := filepath.Glob(filepath.Join(cache, "ru-eng-*.index")); len(now) != 1 || now[0] == tables[0] {
		t.Errorf("tables after the change: %q (before %q)", now, tables)
	}
}

// TestBackwardsSpanish: a Spanish word missing from the dictionary into
// English is found in the translations of the one from English, after
// the first's own glosses when it has some.
func TestBackwardsSpanish(t *testing.T) {
	dir := t.TempDir()
	writeDict(t, filepath.Join(dir, "freedict-spa-eng"), [][2]string{
		{"modelo", "modelo /m/\nmodel, pattern\n"},
	}, 0)
	writeDict(t, filepath.Join(dir, "freedict-eng-spa"), [][2]string{
		{"server", "server /sɜːvə/\n1. servidor\n2. camarero\n"},
		{"waiter", "waiter /weitə/\ncamarero, mozo\n"},
		{"model", "model /mɒdl/\n1. maqueta\n2. modelo\n"},
		{"mock-up", "mock-up /x/\nmodelo a escala\n"},
		{"train", "train /trein/\n1. entrenar, adiestrar\n2. tren\n"},
	}, 16)
	tr := NewCached(dir, t.TempDir())
	defer tr.Close()
	for _, c := range []struct {
		word string
		want []string
	}{
		{"servidores", []string{"server"}},
		{"camareros", []string{"waiter", "server"}}, // the first translation first
		{"entrenar", []string{"train"}},
		{"modelos", []string{"model", "pattern"}}, // its own gloss first; not the phrase's headword
		{"tren", []string{"train"}},
		{"casa", nil},
	} {
		if got := tr.Word("es", c.word); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.word, got, c.want)
		}
	}
	if !tr.Has("es") || tr.Has("it") {
		t.Error("Has: only Spanish is installed")
	}
}

// TestBackwardsNear: a Russian form whose Snowball stem is no
// translation's (a participle, "запрещено": запрещ) is found by the
// translations whose stems begin with it and are a few letters longer
// (запрещать: запреща), from the table in memory and from the cache; a
// stem that only begins a much longer one finds nothing.
func TestBackwardsNear(t *testing.T) {
	dir := t.TempDir()
	writeDict(t, filepath.Join(dir, "mueller7"), [][2]string{
		{"forbid", "forbid\n   _v. запрещать; не позволять\n"},
		{"prohibition", "prohibition\n   _n. запрещение\n"},
		{"password", "password\n   _n. пароль\n"},
		{"planner", "planner\n   _n. планировщик\n"},
	}, 0)
	for _, cache := range []string{"", t.TempDir()} {
		tr := NewCached(dir, cache)
		if got := tr.Word("ru", "запрещено"); !slices.Equal(got, []string{"forbid", "prohibition"}) {
			t.Errorf("cache %q: запрещено: %q", cache, got)
		}
		if got := tr.Word("ru", "запрещает"); !slices.Equal(got, []string{"forbid"}) {
			t.Errorf("cache %q: запрещает (its own stem's): %q", cache, got)
		}
		if got := tr.Word("ru", "план"); got != nil {
			t.Errorf("cache %q: план is not планировщик: %q", cache, got)
		}
		tr.Close()
	}
}
