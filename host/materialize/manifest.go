package materialize

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Every root a render writes keeps its manifest: the files that render wrote there, one path
// per line after a header line. The next render into the root removes the files the manifest
// lists and its own plan does not write, in the same commit as its own files (stage.go), so a
// re-render leaves exactly what it claims. In a config or run root the manifest is the marker
// OwnMarker; in a checkout, which is the user's, it lives in the one directory plans write
// there, .cat-context/.loadout. Plan paths can never name either (hidden segments are refused).

const (
	checkoutContextDir = plan.CheckoutContextDir
	manifestTxPrefix   = "id "
)

// manifestPath is where a root of kind keeps its manifest.
func manifestPath(kind string) string {
	if kind == abi.RootCheckout {
		return checkoutContextDir + "/" + OwnMarker
	}
	return OwnMarker
}

// manifestContent is the manifest of a root of kind holding files, written by render tx.
func manifestContent(kind, tx string, files []string) []byte {
	var b strings.Builder
	b.WriteString("made by loadout for one run's " + kind + " files; its last render (" + manifestTxPrefix + tx + ") wrote:\n")
	for _, f := range files {
		b.WriteString(f + "\n")
	}
	return []byte(b.String())
}

// manifestTx returns the id of the render whose manifest r holds, or "".
func manifestTx(r *os.Root, kind string) string {
	p := manifestPath(kind)
	if noSymlinkAbove(r, p) != nil {
		return ""
	}
	if fi, err := r.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := r.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return ""
	}
	_, rest, ok := strings.Cut(sc.Text(), "("+manifestTxPrefix)
	tx, _, ok2 := strings.Cut(rest, ")")
	if !ok || !ok2 {
		return ""
	}
	return tx
}

// readManifest returns the files the manifest of r lists, each one a render may write in a root
// of kind (validFinal); other lines, and a manifest that is not a regular file, give nothing,
// so a manifest never makes loadout remove what it did not write.
func readManifest(r *os.Root, kind string) ([]string, error) {
	p := manifestPath(kind)
	if err := noSymlinkAbove(r, p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	fi, err := r.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil
	}
	f, err := r.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var files []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for first := true; sc.Scan(); first = false {
		if l := sc.Text(); !first && l != p && l != excludePath && validFinal(kind, l) {
			files = append(files, l)
		}
	}
	return files, sc.Err()
}
