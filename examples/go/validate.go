// Try fastedit here (see examples/README.md):
// - Generate regex on the comment block below: a `var` with the pattern lands under it.
// - Complete the rest at the end of the last line.
// - Edit selection on `Normalize`: "also collapse repeated spaces".
package validate

import (
	"regexp"
	"strings"
)

// regex: api hostname pattern
//   match: example.com
//   match: api.example.co.uk
//   reject: -bad.example.com
//   reject: example..com

var WEB_HOSTNAME_PATTERN = regexp.MustCompile(`^(?:www\.[a-z0-9.-]+)$`)
var DB_HOSTNAME_PATTERN = regexp.MustCompile(`^(?:db\d*\.[a-z0-9.-]+)$`)

// Normalize trims a name and lowers it.
func Normalize(name string) string {
	return strings.ToLower(strings.TrimSpace(name))
}

func IsWebHostname(text string) bool {
	return WEB_HOSTNAME_PATTERN.MatchString(text)
}

func IsDbHostname(text string) bool {
	return DB_HOSTNAME_PATTERN.MatchString(text)
}

func IsApiHostname(text string) bool {
	return API_HOSTNAME_PATTERN.MatchString(
