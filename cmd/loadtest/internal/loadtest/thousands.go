package loadtest

import (
	"fmt"
	"strings"
)

// Thousands formats a rate rounded to a whole number, with commas.
func Thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
