package lexical

// Detect tells the language of a text's Latin-script words as the index
// does when it stems them (see detect): by their function words, English
// when none tells. A query's words are translated by it (query's
// expansion) into the language most of the lake is written in.
func Detect(text string) Lang {
	return detect(tokens(text, nil))
}
