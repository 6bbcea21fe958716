package docstore

import (
	"errors"
	"strings"
)

// Problem is what went wrong with a named document, told apart once for every front door,
// each of which says it in its own words: the tools to a model (tools' explain), the
// command line to a person (command's Terminal.Explain).
type Problem struct {
	Kind ProblemKind
	// One of these is set, by Kind: the name named nothing (NotFound, its Close titles
	// perhaps none; Name "" when the error didn't say), several documents (Ambiguous), the
	// title is another's (Taken), no such version (NoVersion).
	NotFound  *NotFoundError
	Ambiguous *AmbiguousError
	Taken     *TitleTakenError
	NoVersion *NoVersionError
	// Reason is why a title or a text was refused (BadTitle, BadText), without the sentinel's words.
	Reason string
}

// ProblemKind is which of the store's refusals about a named document a Problem is.
type ProblemKind int

// The kinds of Problem; NoProblem is an error that is none of them (a fault, say).
const (
	NoProblem ProblemKind = iota
	ProblemNotFound
	ProblemAmbiguous
	ProblemTaken
	ProblemNoVersion
	ProblemBadTitle
	ProblemBadText
)

// Explain tells which of the store's refusals about a named document err is; Kind
// NoProblem for any other error, which a front door returns as it is.
func Explain(err error) Problem {
	var (
		nf    *NotFoundError
		amb   *AmbiguousError
		taken *TitleTakenError
		nover *NoVersionError
	)
	switch {
	case errors.Is(err, ErrNotFound):
		if !errors.As(err, &nf) {
			nf = &NotFoundError{}
		}
		return Problem{Kind: ProblemNotFound, NotFound: nf}
	case errors.As(err, &amb):
		return Problem{Kind: ProblemAmbiguous, Ambiguous: amb}
	case errors.As(err, &taken):
		return Problem{Kind: ProblemTaken, Taken: taken}
	case errors.As(err, &nover):
		return Problem{Kind: ProblemNoVersion, NoVersion: nover}
	case errors.Is(err, ErrBadTitle):
		return Problem{Kind: ProblemBadTitle, Reason: strings.TrimPrefix(err.Error(), ErrBadTitle.Error()+": ")}
	case errors.Is(err, ErrBadText):
		return Problem{Kind: ProblemBadText, Reason: strings.TrimPrefix(err.Error(), ErrBadText.Error()+": ")}
	}
	return Problem{}
}
