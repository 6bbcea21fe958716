// Package filesync keeps a space's documents as files: a folder and a space made the same
// both ways (Sync), and a space's history written as a git repository (ExportGit).
//
// It drives docstore as the person's page does, from beside the front doors: a file
// saved is a person's save from the version the file was last in step with, merged line
// by line; a document changed in the space is written to its file. The folder is the
// user's: this package never rewrites a file's bytes it did not get from the space, and
// keeps what it needs to remember in the folder's .compass/ (see State).
package filesync
