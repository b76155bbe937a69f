package enrich

import (
	"slices"
	"strings"
	"testing"
)

// TestDecisionKinds checks the kinds of decision the first patterns left
// out, on sentences as users and agents write them in sessions: fixes
// that worked and what was wrong, options ruled out, standing
// instructions, and the same in Russian, German, French and Spanish.
func TestDecisionKinds(t *testing.T) {
	for _, c := range []struct {
		text, pattern string
		decision      bool // at DecisionAt or above; else a candidate
	}{
		// The assistant reporting a fix, and what it found wrong.
		{"Fixed the flaky login test by waiting for the redirect instead of sleeping.", "fixed_by", true},
		{"The fix is to run the migration inside a transaction.", "the_fix_is", true},
		{"The issue is that the LiveView runs in a separate process, so the sandbox checkout does not reach it.", "cause_is", false},
		{"Switched to the table rewrite pattern, since SQLite cannot alter a column's nullability.", "switched_to", false},
		{"I rewrote with_span as a macro so the do block is passed through.", "replace_with", false},
		{"I need to rewrite this migration for SQLite.", "need_to_change", false},
		// An option ruled out.
		{"SQLite doesn't support ALTER COLUMN for nullability changes.", "not_supported", false},
		{"Use the shared sandbox mode, not per-test checkouts.", "use_not", true},
		// The user's standing instructions.
		{"Always run mix credo before you commit.", "always_never", true},
		{"- Never push to main directly.", "always_never", true},
		{"You must not change the public API of the loader.", "must_always", true},
		{"From now on put every new migration under priv/repo.", "from_now_on", true},
		// Other languages.
		{"Решили хранить кэш в Redis, а не в памяти процесса.", "ru_decided", true},
		{"Давайте использовать pgx вместо database/sql.", "ru_decided", true},
		{"Никогда не коммить секреты в репозиторий.", "ru_always", true},
		{"Wir haben uns für SQLite entschieden, weil es eingebettet läuft.", "de_decided", true},
		{"Niemals direkt auf main pushen.", "de_always", true},
		{"On a décidé d'utiliser Postgres plutôt que MySQL.", "fr_decided", true},
		{"Toujours lancer les tests avant de pousser.", "fr_always", true},
		{"Vamos a usar Vite en lugar de Webpack.", "es_decided", true},
		{"Nunca uses credenciales en el código.", "es_always", true},
	} {
		got := Decisions(DefaultPatterns, c.text)
		if len(got) != 1 {
			t.Errorf("%q: %d found, want 1: %+v", c.text, len(got), got)
			continue
		}
		if !slices.Contains(got[0].Patterns, c.pattern) {
			t.Errorf("%q: patterns %v, want %s", c.text, got[0].Patterns, c.pattern)
		}
		if (got[0].Status == "decision") != c.decision {
			t.Errorf("%q: status %s (%.2f)", c.text, got[0].Status, got[0].Confidence)
		}
	}
}

// TestDecisionKindsNot checks sentences that name the same words without
// deciding anything.
func TestDecisionKindsNot(t *testing.T) {
	for _, text := range []string{
		"Let me read the migration first.",
		"Running the tests now.",
		"The tests pass: 65 tests, 0 failures.",
		"I never saw this output before, it is long",
		"Проверяю тесты ещё раз.",
		"Ich lese zuerst die Datei.",
		"Je lis le fichier de configuration.",
		"Estoy leyendo el archivo.",
	} {
		if got := Decisions(DefaultPatterns, text); len(got) != 0 {
			t.Errorf("%q: found %+v", text, got)
		}
	}
}

func TestAfter(t *testing.T) {
	text := "The build broke.\nThe issue is that the cache key ignores the version. Fixed by adding it to the key.\n- then the tests pass"
	for _, tc := range []struct{ sentence, want string }{
		{"The issue is that the cache key ignores the version.", "Fixed by adding it to the key."},
		{"Fixed by adding it to the key.", "- then the tests pass"},            // the next line's sentence
		{"The issue is that the cache key…", "Fixed by adding it to the key."}, // as the lake cut it
		{"- then the tests pass", ""}, // nothing after it
		{"The loader races.", ""},     // not in the text
		{"", ""},
	} {
		if got := After(text, tc.sentence, 300); got != tc.want {
			t.Errorf("After(%q) = %q, want %q", tc.sentence, got, tc.want)
		}
	}
	// Cut as the lake cuts a sentence.
	long := "We decided to pin it. " + strings.Repeat("word ", 100) + "end."
	if got := After(long, "We decided to pin it.", 40); len(got) > 40 || !strings.HasSuffix(got, "…") {
		t.Errorf("long sentence after: %q", got)
	}
}
