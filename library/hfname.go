package library

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// repoPrefix marks a model repo folder in the HF cache; datasets--* and
// spaces--* folders share the cache and are skipped.
const repoPrefix = "models--"

// ParseRepoFolder turns a cache folder name "models--org--name" into the
// repo id "org/name" (or "name" for repos without an owner, like "gpt2").
// It rejects other repo types and names the Hub could not have produced.
func ParseRepoFolder(name string) (string, error) {
	rest, ok := strings.CutPrefix(name, repoPrefix)
	if !ok {
		return "", fmt.Errorf("%q is not a model repo folder (models--org--name)", name)
	}
	// The Hub forbids "--" inside owner and repo names, so the first "--"
	// is the separator the cache introduced.
	owner, repo, found := strings.Cut(rest, "--")
	if !found {
		owner, repo = "", rest
	}
	if err := checkRepoPart(repo); err != nil {
		return "", fmt.Errorf("repo folder %q: %w", name, err)
	}
	if !found {
		return repo, nil
	}
	if err := checkRepoPart(owner); err != nil {
		return "", fmt.Errorf("repo folder %q: %w", name, err)
	}
	if strings.Contains(repo, "--") {
		return "", fmt.Errorf("repo folder %q: too many -- separators", name)
	}
	return owner + "/" + repo, nil
}

// RepoFolder is the inverse of ParseRepoFolder.
func RepoFolder(repoID string) string {
	return repoPrefix + strings.ReplaceAll(repoID, "/", "--")
}

// ValidRepoID checks an "org/name" id as given by a user.
func ValidRepoID(id string) error {
	owner, repo, found := strings.Cut(id, "/")
	if !found {
		owner, repo = "", id
	}
	if err := checkRepoPart(repo); err != nil {
		return fmt.Errorf("repo id %q: %w", id, err)
	}
	if found {
		if err := checkRepoPart(owner); err != nil {
			return fmt.Errorf("repo id %q: %w", id, err)
		}
	}
	if strings.Contains(repo, "/") || strings.Contains(id, "--") {
		return fmt.Errorf("repo id %q: must be org/name", id)
	}
	return nil
}

// checkRepoPart allows what the Hub allows in an owner or repo name:
// letters, digits, '-', '_', '.', not starting or ending with '-' or '.'.
func checkRepoPart(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	if len(s) > 96 {
		return errors.New("name longer than 96 characters")
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return fmt.Errorf("character %q is not allowed", r)
		}
	}
	if s[0] == '-' || s[0] == '.' || s[len(s)-1] == '-' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return fmt.Errorf("%q is not a valid name", s)
	}
	return nil
}

// maxRefBytes bounds a refs file: it holds one 40-character hash.
const maxRefBytes = 1024

// ParseRef reads a refs/<name> file's content: a commit hash, which
// huggingface_hub writes without a newline (we tolerate surrounding
// whitespace). The hash is returned in lowercase.
func ParseRef(b []byte) (string, error) {
	if len(b) > maxRefBytes {
		return "", fmt.Errorf("refs file is %d bytes, not a commit hash", len(b))
	}
	s := string(bytes.TrimSpace(b))
	if !IsCommit(s) {
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		return "", fmt.Errorf("refs file does not hold a commit hash: %q", s)
	}
	return strings.ToLower(s), nil
}

// IsCommit reports whether s is a 40-hex git commit hash (any case).
func IsCommit(s string) bool { return len(s) == 40 && isHex(s) }

// isSHA256 reports whether s is a 64-hex sha256 (the blob name of an LFS file).
func isSHA256(s string) bool { return len(s) == 64 && isHex(s) }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
