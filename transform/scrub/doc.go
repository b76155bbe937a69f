// Package scrub redacts secrets — and, with Options.PII, personal data — in
// pos records, so that none reaches the lake. It is the library under
// pos-scrub, the filter between pos-normalize and pos-load.
//
// # What it reads and writes
//
// Scrub (and Scrubber.Stream) reads pos NDJSON and writes it back in order,
// each secret replaced by a marker that names the rule and a keyed hash of
// the secret:
//
//	[REDACTED:github-pat:5f0c9a1e]
//
// The hash is the first four bytes of HMAC-SHA256(key, secret) in hex: the
// same secret gets the same marker in every record and every run under the
// same key, so it can be followed without being revealed, and without the
// key a marker cannot be checked against guesses.
//
// Every string of every record is scanned, keys included: text, thinking,
// tool inputs and outputs, file paths, titles, documents, exchanges, meta,
// fields this build does not know, and the native record of the raw layer.
// Each record is read as one JSON document; the detectors see the document
// with its strings' escapes decoded in place (scan text), so "key": "value"
// context and multi-line secrets read as they do in a file, and a string
// that holds JSON itself is decoded and scanned once more. A redaction is
// applied to the decoded strings it covers, which are encoded again: the
// record, and the raw record inside it, stay valid JSON. Numbers, literals
// and the fields the pipeline routes by (schema, kind, platform, ts, role,
// content_type, completeness …) are never changed. A secret found once is
// also redacted wherever else it occurs in the record (its raw copy, a
// JSON-escaped copy).
//
// A record nothing was found in is written as it was read, byte for byte
// (records are read lazily, as lines). A changed record is decoded again
// from its scrubbed form and written in canonical form; Record.Line, the
// line as read, goes with the old record.
//
// # Rules
//
// The rules are gitleaks' default configuration (v8.30.1, 222 rules), each
// run through a one-rule gitleaks detector so that its secret group,
// entropy and allowlists apply as gitleaks applies them, plus ours for what
// that set misses: published formats it lacks or only finds next to a
// service's name (Discord, Telegram, Azure, Docker Hub, Bitbucket, xAI,
// Groq, Tailscale … tokens, webhook URLs), passwords in URLs
// (postgres://user:password@host) and on command lines (mysql -pSECRET,
// sshpass -p, htpasswd -b, redis-cli -a, curl -u user:password …), private
// keys without their END line or in base64, and name = value assignments
// whose value passes an entropy and shape check (generic-assignment).
//
// What gitleaks finds in a native file is found in its records: a
// gitleaks rule sees its window with the punctuation that follows a token
// in prose (. , : ) ]) as spaces, since its expressions end a token at a
// space, a quote or a semicolon only; its findings are kept whatever they
// look like; a rule whose match need not hold its keyword runs over the
// whole record once the keyword is in it, as gitleaks runs it over the
// whole file; and where its reported capture is a piece of its match, the
// match is redacted. A secret gets one marker wherever it is and whatever
// follows it: a finding of ours that is a whole match of a gitleaks rule of
// the same format is named after that rule. A value is redacted to its
// real end (the closing quote, a space, the end of the line), whatever
// symbols it holds. With Options.PII: e-mail addresses, phone numbers,
// IPv4 and IPv6 addresses, user names in home directories and the records'
// user field.
//
// Speed comes from scanning little: one pass over the scan text finds every
// rule keyword (one table lookup per byte); each hit is checked cheaply
// (is the token long enough, is there name = value, does the rule's
// expression match at the keyword) and only then is the rule's expression
// run, on a window of a line or so around the keyword, never on a whole
// record. Windows are cached, since transcripts repeat themselves.
//
// # What it never does
//
// It never writes a secret anywhere else: gitleaks' logger is silenced (it
// logs findings), and the Report holds rule names, platforms and counts
// only. It does not decode base64 or hex to look inside (a private key in
// base64 is found by its encoded header), and it does not read files, flags
// or the environment: the key (at least 32 bytes), the allowlist and the
// options are the caller's (LoadKey reads and creates the key file a
// caller names).
package scrub
