// Package threads keeps a space's conversations and their messages in the store (package kv):
// import, append, recent, page.
//
// A Store is one space's view of the store. Everything it keeps sits under that space's
// bucket (spaces.CreateSub), so a conversation of another space is not found by any method,
// by id or in a listing: the scoping is the layout.
//
// # Layout
//
// All values are JSON; keys are raw bytes.
//
//	spaces/<space>/conversations/
//	  summary/<conversation id>             title, created, last, count, first and latest message ids, origin
//	  recent/<activity><conversation id>    empty; activity is 8 bytes of Unix seconds and 4 of nanoseconds, big-endian
//	  messages/<conversation id>/<ULID>     a message that people may read, under its 16-byte ULID
//	  private/<conversation id>/<ULID>      an agent's private step (a tool call or its result)
//	  external/<conversation id>/<ext id>   the 16-byte ULID of the message imported under that external id
//	  sources/<key>                         how far an importer that follows files read one: its own record
//	                                        (ImportParts; package claudecode's key is claude-code:<path>)
//	  search/...                            the search index of titles and messages people may read (search.Index)
//
// A message's ULID is made from its time, so a conversation's bucket is in time order and a
// page is a cursor walking back from the end (or from the message before which to read): it
// costs the page's length whatever the conversation's. Messages in one millisecond get
// increasing ULIDs in the order they were added. Private steps live in their own bucket, so
// pages never step over them however many there are, and nothing that reads for people can
// return one.
//
// Every append updates the conversation's summary and moves its entry in recent, so Recent
// walks that index from the end and reads, for each conversation listed, its summary and its
// first and latest messages by key: never a scan.
//
// # Caveats
//
// Each method is one transaction: Recent, Get and Page are read transactions and see
// one consistent state; Say is one write transaction; Import reads and checks the whole
// input first (so reading a slow pipe never holds the file), then writes it in one write
// transaction, so a bad line leaves nothing of the input behind. Its parsed messages are
// held in memory meanwhile, about the input's size. A store admits one writer at a time (a
// bbolt file for the whole file, a PostgreSQL database across every server on it): while an
// Import writes, every other write (documents too) waits for it.
//
// ImportParts is one write transaction for what an importer read elsewhere and how far it
// read: package claudecode reads and parses transcripts outside any transaction and calls
// it with at most 50,000 messages at a time, so that it never holds the data file while
// reading (a follower runs for as long as the server beside it).
//
// Import's progress function is called while the input is read, outside any transaction.
//
// Message ids never change and no message is deleted but with its whole conversation (Delete,
// DeleteAll: the person's command), so a message id from one Page stays a good before for the
// next, whatever was added in between.
package threads
