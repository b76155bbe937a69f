package v1

// Stem returns the Porter stem of a lowercase ASCII word (M. F. Porter,
// "An algorithm for suffix stripping", 1980). Other words, and words of
// two letters or fewer, are returned as they are.
func Stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	z := stemmer{b: []byte(w), k: len(w) - 1}
	z.step1ab()
	if z.k > 1 {
		z.step1c()
		z.step2()
		z.step3()
		z.step4()
		z.step5()
	}
	return string(z.b[:z.k+1])
}

// stemmer holds the word being stemmed in b[0:k+1]; j marks the end of the
// stem while a suffix is tested.
type stemmer struct {
	b    []byte
	k, j int
}

// cons reports whether b[i] is a consonant.
func (z *stemmer) cons(i int) bool {
	switch z.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !z.cons(i-1)
	}
	return true
}

// m measures the consonant-vowel sequences in b[0:j+1]: <c>(vc)^m<v>.
func (z *stemmer) m() int {
	n, i := 0, 0
	for {
		if i > z.j {
			return n
		}
		if !z.cons(i) {
			break
		}
		i++
	}
	i++
	for {
		for {
			if i > z.j {
				return n
			}
			if z.cons(i) {
				break
			}
			i++
		}
		i++
		n++
		for {
			if i > z.j {
				return n
			}
			if !z.cons(i) {
				break
			}
			i++
		}
		i++
	}
}

func (z *stemmer) vowelInStem() bool {
	for i := 0; i <= z.j; i++ {
		if !z.cons(i) {
			return true
		}
	}
	return false
}

func (z *stemmer) doubleC(j int) bool {
	return j >= 1 && z.b[j] == z.b[j-1] && z.cons(j)
}

// cvc reports whether i-2, i-1, i is consonant-vowel-consonant and the
// last consonant is not w, x or y (hop, not hoop or snow).
func (z *stemmer) cvc(i int) bool {
	if i < 2 || !z.cons(i) || z.cons(i-1) || !z.cons(i-2) {
		return false
	}
	switch z.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

func (z *stemmer) ends(s string) bool {
	l := len(s)
	if l > z.k+1 || string(z.b[z.k-l+1:z.k+1]) != s {
		return false
	}
	z.j = z.k - l
	return true
}

func (z *stemmer) setTo(s string) {
	z.b = append(z.b[:z.j+1], s...)
	z.k = z.j + len(s)
}

func (z *stemmer) r(s string) {
	if z.m() > 0 {
		z.setTo(s)
	}
}

// step1ab removes plurals and -ed or -ing.
func (z *stemmer) step1ab() {
	if z.b[z.k] == 's' {
		switch {
		case z.ends("sses"):
			z.k -= 2
		case z.ends("ies"):
			z.setTo("i")
		case z.b[z.k-1] != 's':
			z.k--
		}
	}
	if z.ends("eed") {
		if z.m() > 0 {
			z.k--
		}
		return
	}
	if (z.ends("ed") || z.ends("ing")) && z.vowelInStem() {
		z.k = z.j
		switch {
		case z.ends("at"):
			z.setTo("ate")
		case z.ends("bl"):
			z.setTo("ble")
		case z.ends("iz"):
			z.setTo("ize")
		case z.doubleC(z.k):
			z.k--
			switch z.b[z.k] {
			case 'l', 's', 'z':
				z.k++
			}
		default:
			z.j = z.k
			if z.m() == 1 && z.cvc(z.k) {
				z.setTo("e")
			}
		}
	}
}

// step1c turns a terminal y into i when there is another vowel in the stem.
func (z *stemmer) step1c() {
	if z.ends("y") && z.vowelInStem() {
		z.b[z.k] = 'i'
	}
}

// suffixes maps double suffixes to single ones (step 2) and -ic-, -full,
// -ness … (step 3), keyed by the penultimate (step 2) or last (step 3)
// letter.
var step2Suffixes = map[byte][][2]string{
	'a': {{"ational", "ate"}, {"tional", "tion"}},
	'c': {{"enci", "ence"}, {"anci", "ance"}},
	'e': {{"izer", "ize"}},
	'l': {{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"}},
	'o': {{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}},
	's': {{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}},
	't': {{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}},
	'g': {{"logi", "log"}},
}

var step3Suffixes = map[byte][][2]string{
	'e': {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}},
	'i': {{"iciti", "ic"}},
	'l': {{"ical", "ic"}, {"ful", ""}},
	's': {{"ness", ""}},
}

func (z *stemmer) replace(table map[byte][][2]string, at int) {
	if at < 0 {
		return
	}
	for _, s := range table[z.b[at]] {
		if z.ends(s[0]) {
			z.r(s[1])
			return
		}
	}
}

func (z *stemmer) step2() { z.replace(step2Suffixes, z.k-1) }
func (z *stemmer) step3() { z.replace(step3Suffixes, z.k) }

var step4Suffixes = map[byte][]string{
	'a': {"al"},
	'c': {"ance", "ence"},
	'e': {"er"},
	'i': {"ic"},
	'l': {"able", "ible"},
	'n': {"ant", "ement", "ment", "ent"},
	'o': {"ion", "ou"},
	's': {"ism"},
	't': {"ate", "iti"},
	'u': {"ous"},
	'v': {"ive"},
	'z': {"ize"},
}

// step4 removes -ant, -ence … in a stem of measure > 1.
func (z *stemmer) step4() {
	if z.k < 1 {
		return
	}
	for _, s := range step4Suffixes[z.b[z.k-1]] {
		if !z.ends(s) {
			continue
		}
		if s == "ion" && !(z.j >= 0 && (z.b[z.j] == 's' || z.b[z.j] == 't')) {
			continue
		}
		if z.m() > 1 {
			z.k = z.j
		}
		return
	}
}

// step5 removes a final -e and turns -ll into -l in a long stem.
func (z *stemmer) step5() {
	z.j = z.k
	if z.b[z.k] == 'e' {
		a := z.m()
		if a > 1 || a == 1 && !z.cvc(z.k-1) {
			z.k--
		}
	}
	if z.b[z.k] == 'l' && z.doubleC(z.k) && z.m() > 1 {
		z.k--
	}
}

// stopwords are English function words: they match everything and say
// nothing about a topic.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		"a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at",
		"be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "could", "did", "do", "does", "doing", "done", "down", "during",
		"each", "either", "else", "etc", "ever", "every", "few", "for", "from", "further",
		"had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how",
		"i", "if", "in", "into", "is", "it", "its", "itself", "just", "let", "lets", "may", "me", "might", "more", "most", "much", "must", "my", "myself",
		"no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
		"please", "same", "shall", "she", "should", "so", "some", "such",
		"than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
		"under", "until", "up", "upon", "us", "very", "was", "we", "were", "what", "when", "where", "whether", "which", "while", "who", "whom", "whose", "why",
		"will", "with", "within", "without", "would", "yet", "you", "your", "yours", "yourself", "yourselves",
		"don", "didn", "doesn", "isn", "wasn", "aren", "won", "ll", "ve", "re",
	} {
		m[w] = true
	}
	return m
}()

func isStop(w string) bool { return stopwords[w] }

// IsStopword reports whether a lowercase word is left out of the index.
func IsStopword(w string) bool { return isStop(w) }
