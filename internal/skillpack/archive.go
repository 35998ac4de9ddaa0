package skillpack

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// Read reads a skill from data: a zip archive, a gzipped tar archive (GitHub's tarballs
// included: their one top-level folder is dropped) or, when name ends in .md, one SKILL.md.
func Read(data []byte, name string) (Skill, error) {
	if len(data) > MaxArchiveBytes {
		return Skill{}, &Error{Reason: ReasonOversize, Msg: fmt.Sprintf("the skill is over %d KB", MaxArchiveBytes>>10)}
	}
	var files []File
	var err error
	switch {
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) || bytes.HasPrefix(data, []byte("PK\x05\x06")):
		files, err = readZip(data)
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		files, err = readTarGz(data)
	case strings.HasSuffix(strings.ToLower(name), ".md") || bytes.HasPrefix(bytes.TrimPrefix(data, []byte("\ufeff")), []byte("---")):
		return FromMarkdown(string(data))
	default:
		return Skill{}, &Error{Reason: ReasonUnknownForm, Msg: "a skill is a zip or tar.gz archive holding SKILL.md, or a SKILL.md file"}
	}
	if err != nil {
		return Skill{}, err
	}
	return FromFiles(dropTopFolder(files))
}

// budget counts the entries and inflated bytes of one archive as it is read.
type budget struct {
	entries  int
	inflated int64
	refused  []Refusal
	files    []File
}

// entry counts one archive entry; too many is an error for the whole archive.
func (b *budget) entry() error {
	b.entries++
	if b.entries > MaxEntries {
		return &Error{Reason: ReasonTooMany, Msg: fmt.Sprintf("the archive has over %d entries", MaxEntries)}
	}
	return nil
}

// read reads one regular file's content from r, at most MaxFileBytes of it and never more
// than the skill's total bound, whatever its header declared.
func (b *budget) read(name string, r io.Reader) error {
	room := min(int64(MaxFileBytes), MaxTotalBytes-b.inflated)
	data, err := io.ReadAll(io.LimitReader(r, room+1))
	b.inflated += int64(len(data))
	switch {
	case err != nil:
		b.refused = append(b.refused, Refusal{name, ReasonCorrupt, "cannot be read: " + oneLine(err.Error())})
		return nil
	case int64(len(data)) > room && b.inflated > MaxTotalBytes:
		return &Error{Reason: ReasonBomb, Msg: fmt.Sprintf("the archive inflates to over %d KB (a decompression bomb)", MaxTotalBytes>>10),
			Files: []Refusal{{name, ReasonBomb, "inflates past the skill's bound"}}}
	case int64(len(data)) > room:
		b.refused = append(b.refused, Refusal{name, ReasonOversize, fmt.Sprintf("over %d KB", MaxFileBytes>>10)})
		return nil
	}
	b.files = append(b.files, File{Path: name, Text: string(data)})
	return nil
}

// done returns the files read, or the refusals.
func (b *budget) done() ([]File, error) {
	if len(b.refused) > 0 {
		return nil, &Error{Reason: b.refused[0].Reason, Msg: "the skill was refused", Files: b.refused}
	}
	if len(b.files) == 0 {
		return nil, &Error{Reason: ReasonEmptyArchive, Msg: "the archive holds no files"}
	}
	return b.files, nil
}

// readZip reads a zip archive's regular files; symlinks and other special entries are
// refused, each with its reason.
func readZip(data []byte) ([]File, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, &Error{Reason: ReasonCorrupt, Msg: "the zip archive cannot be read: " + oneLine(err.Error())}
	}
	b := &budget{}
	for _, f := range zr.File {
		if err := b.entry(); err != nil {
			return nil, err
		}
		name, dir := cleanName(f.Name)
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			b.refused = append(b.refused, Refusal{f.Name, ReasonSymlink, "a symbolic link"})
			continue
		case dir || mode.IsDir():
			continue
		case !mode.IsRegular():
			b.refused = append(b.refused, Refusal{f.Name, ReasonSpecialFile, "not a regular file"})
			continue
		}
		if r, ok := checkPath(name); !ok {
			r.Path = f.Name
			b.refused = append(b.refused, r)
			continue
		}
		if f.UncompressedSize64 > MaxFileBytes && f.UncompressedSize64/max(f.CompressedSize64, 1) > bombRatio {
			b.refused = append(b.refused, Refusal{f.Name, ReasonBomb, fmt.Sprintf("inflates to %d MB, over %d times its packed size", f.UncompressedSize64>>20, bombRatio)})
			continue
		}
		rc, err := f.Open()
		if err != nil {
			b.refused = append(b.refused, Refusal{f.Name, ReasonCorrupt, "cannot be read: " + oneLine(err.Error())})
			continue
		}
		err = b.read(name, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	return b.done()
}

// readTarGz reads a gzipped tar archive's regular files; links and devices are refused,
// each with its reason. The gzip stream is read no further than the skill's bounds allow.
func readTarGz(data []byte) ([]File, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, &Error{Reason: ReasonCorrupt, Msg: "the tar.gz archive cannot be read: " + oneLine(err.Error())}
	}
	defer gz.Close()
	// Headers and padding take 512-byte blocks besides the files' bytes.
	limit := int64(MaxTotalBytes + (MaxEntries+2)*1024)
	lr := &io.LimitedReader{R: gz, N: limit}
	tr := tar.NewReader(lr)
	b := &budget{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if lr.N <= 0 {
				return nil, &Error{Reason: ReasonBomb, Msg: fmt.Sprintf("the archive inflates to over %d KB (a decompression bomb)", MaxTotalBytes>>10)}
			}
			return nil, &Error{Reason: ReasonCorrupt, Msg: "the tar.gz archive cannot be read: " + oneLine(err.Error())}
		}
		if h.Typeflag == tar.TypeXGlobalHeader { // GitHub's tarballs start with one
			continue
		}
		if err := b.entry(); err != nil {
			return nil, err
		}
		name, dir := cleanName(h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeSymlink, tar.TypeLink:
			b.refused = append(b.refused, Refusal{h.Name, ReasonSymlink, "a link (to " + clip(h.Linkname, 60) + ")"})
			continue
		case tar.TypeReg:
		default:
			b.refused = append(b.refused, Refusal{h.Name, ReasonSpecialFile, "not a regular file"})
			continue
		}
		if dir {
			continue
		}
		if r, ok := checkPath(name); !ok {
			r.Path = h.Name
			b.refused = append(b.refused, r)
			continue
		}
		if err := b.read(name, tr); err != nil {
			return nil, err
		}
	}
	return b.done()
}

// cleanName drops a leading "./" from an archive entry's name and reports a directory
// ("folder/").
func cleanName(name string) (string, bool) {
	for strings.HasPrefix(name, "./") {
		name = name[2:]
	}
	if strings.HasSuffix(name, "/") {
		return strings.TrimSuffix(name, "/"), true
	}
	return name, false
}

// dropTopFolder drops one folder every file is inside when SKILL.md is not at the top but
// directly in it: GitHub's tarball of a repository ("owner-repo-sha/SKILL.md"), a zip of a
// folder.
func dropTopFolder(files []File) []File {
	for _, f := range files {
		if f.Path == SkillMD {
			return files
		}
	}
	top, _, ok := strings.Cut(files[0].Path, "/")
	if !ok {
		return files
	}
	prefix := top + "/"
	out := make([]File, len(files))
	for i, f := range files {
		if !strings.HasPrefix(f.Path, prefix) {
			return files
		}
		out[i] = File{Path: strings.TrimPrefix(f.Path, prefix), Text: f.Text}
	}
	return out
}

// ReadDir reads a skill from a folder (steward skills scan PATH): the same checks as an
// archive, symlinks refused (never followed), every file bounded.
func ReadDir(fsys fs.FS) (Skill, error) {
	b := &budget{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			b.refused = append(b.refused, Refusal{p, ReasonCorrupt, "cannot be read: " + oneLine(err.Error())})
			return nil
		}
		if p == "." {
			return nil
		}
		if err := b.entry(); err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			b.refused = append(b.refused, Refusal{p, ReasonSymlink, "a symbolic link"})
			return nil
		case d.IsDir():
			if strings.Count(p, "/")+1 > MaxDepth {
				b.refused = append(b.refused, Refusal{p, ReasonTraversal, fmt.Sprintf("deeper than %d folders", MaxDepth)})
				return fs.SkipDir
			}
			return nil
		case !d.Type().IsRegular():
			b.refused = append(b.refused, Refusal{p, ReasonSpecialFile, "not a regular file"})
			return nil
		}
		f, err := fsys.Open(p)
		if err != nil {
			b.refused = append(b.refused, Refusal{p, ReasonCorrupt, "cannot be read: " + oneLine(err.Error())})
			return nil
		}
		defer f.Close()
		return b.read(path.Clean(p), f)
	})
	if err != nil {
		return Skill{}, err
	}
	files, err := b.done()
	if err != nil {
		return Skill{}, err
	}
	return FromFiles(files)
}
