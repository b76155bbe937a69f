// Package lexdb reads the lexical databases Debian ships for dictd
// (FreeDict's bilingual dictionaries, dict-freedict-*; Mueller's
// English-Russian, mueller7-dict) and turns a word of another language
// into the English words a dictionary gives for it.
//
// A dictionary is an index (headword, base64 offset, base64 length, one a
// line, sorted by lowercased headword) and a data file, plain or
// dictzip-compressed (.dict.dz: gzip whose chunks are compressed apart, so
// a definition is read without inflating what comes before it). Lookups
// are binary searches over the index file and reads of one or two chunks:
// nothing is loaded whole. The dictionaries from English (Mueller's, and
// FreeDict's eng-rus, eng-spa, eng-fra and eng-ita), in which a word of
// their second language is looked up backwards, are reversed once into a
// table of the same format kept in a cache directory (reverse.go).
//
// The package reads the dictionaries only: a missing dictionary is a
// language without translations, never an error for its callers.
package lexdb
