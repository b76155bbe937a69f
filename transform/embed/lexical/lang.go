package lexical

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/russian"
	"github.com/blevesearch/snowballstem/spanish"
)

// Lang is a language whose words are stemmed and whose function words are
// left out of the index.
type Lang uint8

// The languages: those of the Latin script are told apart by their
// function words (see detect), Russian by its script.
const (
	English Lang = iota
	German
	French
	Spanish
	Italian
	Portuguese
	Dutch
	Russian
	numLangs
)

var langNames = [numLangs]string{"en", "de", "fr", "es", "it", "pt", "nl", "ru"}

// String is the language's ISO 639-1 code.
func (l Lang) String() string {
	if l < numLangs {
		return langNames[l]
	}
	return "?"
}

// stemmers are Snowball's (the snowballstem module is the code the
// Snowball compiler generates for Go, as bleve uses it).
var stemmers = [numLangs]func(*snowballstem.Env) bool{
	English: english.Stem, German: german.Stem, French: french.Stem, Spanish: spanish.Stem,
	Italian: italian.Stem, Portuguese: portuguese.Stem, Dutch: dutch.Stem, Russian: russian.Stem,
}

var envs = sync.Pool{New: func() any { return snowballstem.NewEnv("") }}

// Stem returns the Snowball stem of a lowercase word of lang.
func Stem(lang Lang, w string) string {
	if lang >= numLangs {
		return w
	}
	env := envs.Get().(*snowballstem.Env)
	env.SetCurrent(w)
	stemmers[lang](env)
	s := env.Current()
	envs.Put(env)
	return s
}

// The stems of the words seen most are kept: prose repeats its words, and
// a stem costs allocations. A map per language, looked up by the word's
// bytes (which does not copy them).
var (
	stemMu    [numLangs]sync.RWMutex
	stems     [numLangs]map[string]string
	stemCount atomic.Int64
)

const maxStems = 1 << 17

// stemOf is Stem of a lowercase word, from the cache when it is there.
func stemOf(lang Lang, w []byte) string {
	stemMu[lang].RLock()
	s, ok := stems[lang][string(w)]
	stemMu[lang].RUnlock()
	if ok {
		return s
	}
	word := string(w)
	s = Stem(lang, word)
	if stemCount.Load() < maxStems {
		stemMu[lang].Lock()
		if stems[lang] == nil {
			stems[lang] = map[string]string{}
		}
		if _, ok := stems[lang][word]; !ok {
			stems[lang][word] = s
			stemCount.Add(1)
		}
		stemMu[lang].Unlock()
	}
	return s
}

// stopLangs maps each function word to the languages (a bit each) it is
// one of: they match everything and say nothing about a topic, and they
// tell the language of a text.
var stopLangs = func() map[string]uint16 {
	lists := [numLangs]string{
		English: `a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing done down during each either else etc ever every few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself just let lets may me might
more most much must my myself no nor not now of off on once only or other our ours ourselves out over own please same
shall she should so some such than that the their theirs them themselves then there these they this those through to too
under until up upon us very was we were what when where whether which while who whom whose why will with within without
would yet you your yours yourself yourselves`,
		German: `aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anderm andern
anders auch auf aus bei bin bis bist da damit dann das dass dasselbe dazu daß dein deine deinem deinen deiner deines dem
demselben den denn denselben der derer derselbe derselben des desselben dessen dich die dies diese dieselbe dieselben
diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer eines einig einige einigem einigen einiger
einiges einmal er es etwas euch euer eure eurem euren eurer eures für gegen gewesen hab habe haben hat hatte hatten hier
hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer ihres im in indem ins ist jede jedem jeden jeder jedes jene
jenem jenen jener jenes jetzt kann kein keine keinem keinen keiner keines können könnte machen man manche manchem
manchen mancher manches mein meine meinem meinen meiner meines mich mir mit muss musste nach nicht nichts noch nun nur ob
oder ohne sehr sein seine seinem seinen seiner seines selbst sich sie sind so solche solchem solchen solcher solches soll
sollte sondern sonst über um und uns unser unsere unserem unseren unserer unseres unter viel vom von vor während war
waren warst was weg weil weiter welche welchem welchen welcher welches wenn werde werden wie wieder will wir wird wirst
wo wollen wollte würde würden zu zum zur zwar zwischen`,
		French: `au aux avec ce ces dans de des du elle en et eux il ils je la le les leur lui ma mais me même mes moi mon ne
nos notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une vos votre vous c d j l à m n s
t y été étée étées étés étant étante étants étantes suis es est sommes êtes sont serai seras sera serons serez seront
serais serait serions seriez seraient étais était étions étiez étaient fus fut fûmes fûtes furent sois soit soyons soyez
soient fusse fusses fût fussions fussiez fussent ayant ayante ayantes ayants eu eue eues eus ai as avons avez ont aurai
auras aura aurons aurez auront aurais aurait aurions auriez auraient avais avait avions aviez avaient eut eûmes eûtes
eurent aie aies ait ayons ayez aient eusse eusses eût eussions eussiez eussent ceci cela celà cet cette ici ils les
leurs quel quels quelle quelles sans soi comme plus aussi très donc alors`,
		Spanish: `de la que el en y a los del se las por un para con no una su al lo como más pero sus le ya o este sí porque
esta entre cuando muy sin sobre también me hasta hay donde quien desde todo nos durante todos uno les ni contra otros ese
eso ante ellos e esto mí antes algunos qué unos yo otro otras otra él tanto esa estos mucho quienes nada muchos cual poco
ella estar estas algunas algo nosotros mi mis tú te ti tu tus ellas nosotras vosotros vosotras os mío mía míos mías tuyo
tuya tuyos tuyas suyo suya suyos suyas nuestro nuestra nuestros nuestras vuestro vuestra vuestros vuestras esos esas
estoy estás está estamos estáis están esté estés estemos estéis estén estaba estabas estábamos estaban he has ha hemos
habéis han había habían soy eres es somos sois son era eras éramos eran fue fueron ser sea tengo tiene tenemos tienen
hace hacer cómo dónde puede puedo`,
		Italian: `ad al allo ai agli all agl alla alle con col coi da dal dallo dai dagli dall dagl dalla dalle di del dello dei
degli dell degl della delle in nel nello nei negli nell negl nella nelle su sul sullo sui sugli sull sugl sulla sulle per
tra contro io tu lui lei noi voi loro mio mia miei mie tuo tua tuoi tue suo sua suoi sue nostro nostra nostri nostre
vostro vostra vostri vostre mi ti ci vi lo la li le gli ne il un uno una ma ed se perché anche come dov dove che chi cui
non più quale quanto quanti quanta quante quello quelli quella quelle questo questi questa queste si tutto tutti a c e i l
o ho hai ha abbiamo avete hanno sono sei è siamo siete era erano essere stato stata fare fa fatto molto cosa`,
		Portuguese: `de a o que e do da em um para com não uma os no se na por mais as dos como mas ao ele das à seu sua ou
quando muito nos já eu também só pelo pela até isso ela entre depois sem mesmo aos seus quem nas me esse eles você essa
num nem suas meu às minha numa pelos elas qual nós lhe deles essas esses pelas este dele tu te vocês vos lhes meus minhas
teu tua teus tuas nosso nossa nossos nossas dela delas esta estes estas aquele aquela aqueles aquelas isto aquilo estou
está estamos estão estive esteve estivemos estiveram estava estávamos estavam é somos são era éramos eram fui foi fomos
foram seja sejam ser tenho tem temos têm tinha tinham tive teve tiveram ter há houve fazer faz feito pode posso`,
		Dutch: `de en van ik te dat die in een hij het niet zijn is was op aan met als voor had er maar om hem dan zou of wat mijn
men dit zo door over ze zich bij ook tot je mij uit der daar haar naar heb hoe heeft hebben deze u want nog zal me zij nu
ge geen omdat iets worden toch al waren veel meer doen toen moet ben zonder kan hun dus alles onder ja eens hier wie werd
altijd doch wordt wezen kunnen ons zelf tegen na reeds wil kon niets uw iemand geweest andere we wij jullie jij waar waarom`,
		Russian: `и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было вот от меня
еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь опять уж вам ведь там потом
себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж
тогда кто этот того потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем всех
никогда можно при наконец два об другой хоть после над больше тот через эти нас про всего них какая много разве три эту
моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно всю между это как почему`,
	}
	m := map[string]uint16{}
	for l, list := range lists {
		for _, w := range strings.Fields(list) {
			m[w] |= 1 << l
		}
	}
	return m
}()

// IsStopword reports whether a lowercase word is a function word of lang,
// or of English (which prose in any language quotes), and so left out of
// the index.
func IsStopword(lang Lang, w string) bool {
	return stopLangs[w]&(1<<lang|1<<English) != 0
}

// detectSample is how much of a text detect reads: a chunk's language
// shows in its first few sentences.
const detectSample = 4 << 10

// stopMask is, for a word detect reads, the languages it is a function
// word of; ok is false for a word longer than any of them, not looked up.
func stopMask(w string) (mask uint16, ok bool) {
	var buf [24]byte
	if len(w) > len(buf) {
		return 0, false
	}
	b := buf[:0]
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			b = appendLower(buf[:0], w)
			break
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return stopLangs[string(b)], true
}

// detect tells the language of a text's Latin-script words by their
// function words (looked up by tokens for the words of the first
// detectSample bytes): the language with the most of them, if it has at
// least two (one in a text of a few words, as a query is) and more than
// English; English otherwise, which is also what code and short notes are.
// Cyrillic words are Russian whatever this says (see langOf).
func detect(words []token) Lang {
	var counts [numLangs]int
	n := 0
	for _, w := range words {
		if w.start >= detectSample {
			break
		}
		n++
		if mask := w.stop; mask != 0 {
			for l := range numLangs {
				if mask&(1<<l) != 0 {
					counts[l]++
				}
			}
		}
	}
	best, least := English, 2
	if n <= 8 {
		least = 1
	}
	for l := German; l < Russian; l++ {
		if counts[l] >= least && counts[l] > counts[English] && counts[l] > counts[best] {
			best = l
		}
	}
	return best
}

// wordLang is the language a word is stemmed in: Russian for a Cyrillic
// word, the text's for a Latin one, none (noLang) for other scripts, whose
// words are only lowercased.
const noLang = numLangs

func wordLang(w string, text Lang) Lang {
	r, _ := utf8.DecodeRuneInString(w)
	switch {
	case r < utf8.RuneSelf || unicode.Is(unicode.Latin, r):
		return text
	case unicode.Is(unicode.Cyrillic, r):
		return Russian
	}
	return noLang
}
