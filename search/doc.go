// Package search finds and ranks the texts that answer a query of words and "quoted
// phrases": the query's parsing, the matching and the lines, the ranking, as plain
// functions; and the inverted index, kept in a kv bucket above the store boundary, that
// the stores keep in the same transaction as every text.
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
// phrase of characters: found wherever it occurs as a substring. Tokens of letters a to z
// are compared by their English stems (Stem), but in a quoted phrase, which is compared
// as written.
//
// # What is found
//
// Every text that has at least one of the query's terms, not counting stop words ("the",
// "of", "what") when it has others, and every quoted phrase. Terms are words and phrases;
// a phrase's tokens one after the other, whatever punctuation or line breaks are between
// them. A text has "every word" when it has every term but the stop words.
//
// # Ranking
//
// Those with every word first; then by BM25F (Model, Ranking) from the index's postings,
// plus, for the best of them, read whole, how near each other the terms come. Then the
// store's own order (latest first). Plan scores from the index; Rank reads the texts it
// needs through the store (Fetch) and matches them, within budgets (MaxPostings, MaxRead,
// MaxBatch) that bound any query's cost. The stores run both in the one read transaction
// of the call (docstore.Reader, threads.Reader).
package search
