// Package search finds words and "quoted phrases" in text: the query's parsing, the
// matching, the matching lines and the ranking, as plain functions over text, and the
// inverted index, in the store's buckets (package kv), that the stores use to find
// candidates quickly.
//
// The functions over text (Parse, Tokens, Match, Better) define what a search answers; an
// index only narrows down which texts they are run on. Any store that finds every text
// holding all of a query's tokens (Index here, the same on a bbolt file and on PostgreSQL)
// and then runs Match gives the same answers.
//
// # Words
//
// Text is cut into tokens as a person reads words in Latin, Greek and Cyrillic scripts: a
// token is a run of letters and digits, so punctuation (Markdown's too: `**`, `_`, `#`,
// `[`, `](`) and apostrophes and hyphens separate words ("e-mail" is the phrase "e mail").
// Tokens are folded: lower case, accents and other marks removed, compatibility forms made
// plain (NFKD: "ﬁ" is "fi", full-width "Ｃ" is "c"), and a few letters that have no
// decomposition spelled out ("ß" is "ss", "æ" "ae", "ø" "o", "ł" "l"). Han, Hiragana,
// Katakana and Hangul characters are a token each, so a query in those scripts is a
// phrase of characters: found wherever it occurs as a substring.
//
// A word of the query that is more than one token ("e-mail", "東京") is a phrase. Every
// word and phrase must occur, in the title or in the text; a phrase's tokens one after the
// other, whatever punctuation or line breaks are between them.
//
// # Ranking
//
// Best first: the texts whose title has more of the query's words and phrases; then those
// where they occur more often (each counted at most 10 times, so that length alone doesn't
// win); then those where they come closest together (the fewest tokens that hold one of
// each); then the store's own order (latest saved first).
package search
