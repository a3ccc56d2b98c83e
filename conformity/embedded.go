package conformity

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
)

// The project's corpus and its known divergences, built into every binary that imports the
// package, so that `loadout conformity` certifies a plugin wherever it runs, outside a checkout
// too. They live here, not in a package of their own, because go:embed reads only below the
// embedding package's directory, and a testdata directory cannot be a package.
//
//go:embed testdata/cases/*.json testdata/exceptions.txt
var embedded embed.FS

// EmbeddedName names the built-in corpus in results (Result.Dir) and reports.
const EmbeddedName = "embedded:conformity/testdata/cases"

// Corpus is a set of case files held in a file system (at its root), such as the built-in
// corpus (Embedded). Name says where it came from in results.
type Corpus struct {
	Name string
	FS   fs.FS
}

// Embedded returns the corpus built into the binary (conformity/testdata/cases of the source it
// was built from) and its known divergences (conformity/testdata/exceptions.txt). It is safe
// for concurrent use; the file system is read-only.
func Embedded() (Corpus, []Exception, error) {
	cases, err := fs.Sub(embedded, "testdata/cases")
	if err != nil {
		return Corpus{}, nil, fmt.Errorf("embedded corpus: %w", err)
	}
	text, err := embedded.ReadFile("testdata/exceptions.txt")
	if err != nil {
		return Corpus{}, nil, fmt.Errorf("embedded exceptions: %w", err)
	}
	ex, err := ParseExceptions(bytes.NewReader(text))
	if err != nil {
		return Corpus{}, nil, fmt.Errorf("embedded exceptions.txt: %w", err)
	}
	return Corpus{Name: EmbeddedName, FS: cases}, ex, nil
}
