package main

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://ana:s3cret@db.example:5432/compass":                "postgres://ana@db.example:5432/compass",
		"postgresql://ana:s3cret@db:5432/c?search_path=team&sslmode=x": "postgresql://ana@db:5432/c?search_path=team&sslmode=x",
		"postgres://db:5432/c?password=s3cret&search_path=team":        "postgres://db:5432/c?search_path=team",
		"postgres://ana@db/c":         "postgres://ana@db/c",
		"postgres://ana:s3%cret@db/c": "postgres://…@db/c", // not a URL Go parses
		// The client key's passphrase, which pgx reads from the URL too.
		"postgres://ana@db/c?sslpassword=s3cret&sslmode=verify-full": "postgres://ana@db/c?sslmode=verify-full",
		// Not parsed, and a password in the query.
		"postgres://db/c%zz?password=s3cret":          "postgres://db/c%zz",
		"postgres://ana:x@db/c%zz?sslpassword=s3cret": "postgres://…@db/c%zz",
	} {
		got := redact(in)
		if got != want || strings.Contains(got, "s3") {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsPostgres(t *testing.T) {
	for data, want := range map[string]bool{
		"postgres://h/db": true, "postgresql://h/db": true,
		"/var/lib/compass.db": false, "compass.db": false, "postgres.db": false,
	} {
		if isPostgres(data) != want {
			t.Errorf("isPostgres(%q) = %v", data, !want)
		}
	}
}
